"""What every report must be: HTML that parses, refers to nothing outside itself, and whose
embedded images decode (Pillow; SVG as XML; MP4 by its header)."""
import base64
import io
import xml.etree.ElementTree as ET
from html.parser import HTMLParser


class Page(HTMLParser):
    """Every start tag with its attributes, and the visible text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self._skip = [], [], 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)

    @property
    def words(self):
        return " ".join(self.text)


def decode(uri):
    head, _, data = uri.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), head[:40]
    return head[5:-7], base64.b64decode(data, validate=True)


def check_self_contained(text):
    """Structure every report shares: parses, no external reference, images decode."""
    page = Page(text)
    assert "http:" not in text and "https:" not in text and "url(" not in text
    assert not [t for t, _ in page.tags if t in ("link", "iframe", "object", "embed", "base")]
    for tag, attrs in page.tags:
        for key in ("src", "href", "srcset", "poster", "data"):
            if key in attrs:
                value = attrs[key]
                assert value.startswith("data:") or (key == "href" and value.startswith("#")), value[:60]
    images = {}
    from PIL import Image
    for tag, attrs in page.tags:
        if tag == "img":
            kind, data = decode(attrs["src"])
            if kind == "image/svg+xml":
                root = ET.fromstring(data)
                assert root.tag.endswith("svg")
            else:
                image = Image.open(io.BytesIO(data))
                image.load()
                assert image.width > 0 and image.height > 0
                assert Image.MIME[image.format] == kind
            images[attrs.get("alt", "")] = (kind, data)
        elif tag == "video":  # an animation written as MP4 (when ffmpeg is installed)
            kind, data = decode(attrs["src"])
            assert kind == "video/mp4" and data[4:8] == b"ftyp"
            images[attrs.get("title", "")] = (kind, data)
    return page, images
