// dialectbias review app: keyboard shortcuts for the annotation form (no build step, no dependencies).
// A digit (t = 10) scores the highlighted scale and moves on; ArrowUp/ArrowDown (or k/j) move between
// scales; letters shown next to a box tick it; Enter saves (Ctrl+Enter inside a text box).
(function () {
  "use strict";
  const form = document.getElementById("annotation");
  if (!form) return;
  const scales = Array.from(form.querySelectorAll("fieldset.scale"));
  let active = 0;

  function firstUnfilled(from) {
    for (let i = from; i < scales.length; i++) {
      if (!scales[i].querySelector("input:checked")) return i;
    }
    return Math.min(from, scales.length - 1);
  }
  function highlight(i) {
    if (!scales.length) return;
    active = Math.max(0, Math.min(i, scales.length - 1));
    scales.forEach((s, j) => s.classList.toggle("active", j === active));
  }
  highlight(firstUnfilled(0));
  scales.forEach((s, j) => s.addEventListener("click", () => highlight(j)));

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" ||
      (target.tagName === "INPUT" && !["radio", "checkbox"].includes(target.type)));
  }
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (typing(event.target) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); highlight(active + 1); return; }
    if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); highlight(active - 1); return; }
    const key = event.key.toLowerCase();
    if (scales.length) {
      const radio = scales[active].querySelector('input[data-key="' + CSS.escape(key) + '"]');
      if (radio) {
        event.preventDefault();
        radio.checked = true;
        highlight(firstUnfilled(active + 1 < scales.length ? active + 1 : active));
        return;
      }
    }
    const box = form.querySelector('input[data-global-key="' + CSS.escape(key) + '"]');
    if (box) {
      event.preventDefault();
      box.checked = box.type === "checkbox" ? !box.checked : true;
    }
  });
})();
