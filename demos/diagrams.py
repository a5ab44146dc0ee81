"""Draw every diagram of diagrams/ as `blocksim draw` does, into `<name>_diagram.png`.

    python demos/diagrams.py                    # into runs/demos/
    python demos/diagrams.py --update-figures   # the copies shown in demos/README.md

The PNGs are stored with a 64-colour palette (line drawings lose nothing visible and the
files shrink about threefold).
"""
import io

from _figures import DIAGRAMS, parse_args

import blocksim
from blocksim.draw.render import to_bytes


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], argv)
    from PIL import Image
    args.out.mkdir(parents=True, exist_ok=True)
    for path in sorted(DIAGRAMS.glob("*.yaml")):
        model = blocksim.load(path, args.set or None)
        image = Image.open(io.BytesIO(to_bytes(model, "png"))).convert("RGB")
        target = args.out / f"{model.name}_diagram.png"
        image.quantize(colors=64).save(target, optimize=True)
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
