// dialectbias view: sort a table by clicking its header, filter its rows by the selects and the text box.
// Without this script the same links and forms sort and filter on the server.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function cellValue(row, col) {
    var cell = row.cells[col];
    if (!cell) { return ""; }
    return cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent.trim();
  }

  function compare(a, b) {
    var empty = function (v) { return v === "" || v === "nan"; };
    if (empty(a) && empty(b)) { return 0; }
    if (empty(a)) { return 1; }
    if (empty(b)) { return -1; }
    var x = Number(a), y = Number(b);
    if (!isNaN(x) && !isNaN(y)) { return x - y; }
    return a.localeCompare(b);
  }

  function sortTable(table, col, th) {
    var desc = th.getAttribute("aria-sort") === "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = cellValue(r1, col), b = cellValue(r2, col);
      var empty1 = a === "", empty2 = b === "";
      if (empty1 || empty2) { return compare(a, b); }  // empty cells last either way
      return desc ? compare(b, a) : compare(a, b);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", desc ? "descending" : "ascending");
  }

  function applyFilters(form, table) {
    var selects = form.querySelectorAll("select[data-col]");
    var q = form.querySelector("input.q");
    var needle = q ? q.value.trim().toLowerCase() : "";
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (row) {
      var ok = true;
      Array.prototype.forEach.call(selects, function (s) {
        if (s.value !== "" && cellValue(row, Number(s.getAttribute("data-col"))) !== s.value) { ok = false; }
      });
      if (ok && needle && row.textContent.toLowerCase().indexOf(needle) < 0) { ok = false; }
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    var count = form.querySelector(".count");
    if (count) { count.textContent = shown + " of " + rows.length + " rows"; }
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      Array.prototype.forEach.call(table.querySelectorAll("th a.sort"), function (link) {
        link.addEventListener("click", function (event) {
          event.preventDefault();
          sortTable(table, Number(link.getAttribute("data-col")), link.parentElement);
        });
      });
      var section = table.closest("section");
      var form = section ? section.querySelector("form.filters") : null;
      if (form) {
        form.addEventListener("submit", function (event) { event.preventDefault(); applyFilters(form, table); });
        form.addEventListener("change", function () { applyFilters(form, table); });
        form.addEventListener("input", function () { applyFilters(form, table); });
      }
    });
  });
}());
