"""Image references of items (issue 8.3): confined to the data folder, loaded from files, data URLs and URLs."""

from __future__ import annotations

import base64
import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from dialectbias.data import MediaError, load_image, resolve_item_image
from dialectbias.errors import DataError


def png(color: tuple[int, int, int] = (3, 4, 5)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (6, 5), color).save(out, format="PNG")
    return out.getvalue()


def test_a_symlink_leading_out_of_the_data_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "secret.png").write_bytes(png())
    (tmp_path / "data" / "link.png").symlink_to(tmp_path / "secret.png")
    with pytest.raises(DataError, match=r"item 'q7': image 'link\.png' is outside the data folder"):
        resolve_item_image("link.png", tmp_path / "data", "items.jsonl:7", "q7")


@pytest.mark.parametrize("ref", ["file:///etc/passwd", "data:image/png;base64,AAAA", "", 3])
def test_other_references_are_refused(tmp_path: Path, ref: object) -> None:
    with pytest.raises(DataError, match="item 'q1'"):
        resolve_item_image(ref, tmp_path, "items.jsonl:1", "q1")


def test_a_data_url_loads_its_bytes() -> None:
    data, info = load_image("data:image/png;base64," + base64.b64encode(png()).decode())
    assert data == png() and (info.mime, info.width, info.height) == ("image/png", 6, 5)


@pytest.fixture
def image_site(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "cat.png").write_bytes(png((9, 9, 9)))
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *a: None  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_http_url_is_downloaded_and_a_missing_one_is_a_media_error(image_site: str) -> None:
    assert load_image(f"{image_site}/cat.png")[0] == png((9, 9, 9))
    assert resolve_item_image(f"{image_site}/cat.png", None, "hf://x", "q1") == f"{image_site}/cat.png"
    with pytest.raises(MediaError, match="HTTP 404"):
        load_image(f"{image_site}/dog.png", "item 'q2': image 'dog.png'")
