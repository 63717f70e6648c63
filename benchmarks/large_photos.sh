#!/usr/bin/env bash
# Builds the large-photos corpus (an ImageFolder with one class) for issue 15's
# large-photo target: real multi-megapixel photos, half of them progressive, from
# Debian's wallpaper packages (apt-get download: no root, nothing installed) plus
# the two baseline photos of ../shared/data/edge-cases/large.
#   bash benchmarks/large_photos.sh [DEST]   (default ~/.cache/jpegloader/large-photos-v1)
set -euo pipefail
DEST=${1:-$HOME/.cache/jpegloader/large-photos-v1}
DATA=${DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
if [ -d "$DEST/photos" ] && [ "$(ls "$DEST/photos" | wc -l)" -ge 14 ]; then
    echo "large photos: $DEST (already built)"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt-get download writes as _apt
echo "large photos: downloading 4 wallpaper packages (about 90 MB) ..."
(cd "$work" && apt-get download -q mate-backgrounds lomiri-wallpapers-20.04 \
    ukui-wallpapers gnome-backgrounds >/dev/null)
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/x"; done
mkdir -p "$DEST/photos"
# 7 progressive (1.3-18 MP) and 7 baseline (2.5-24 MP) photos.
for name in FreshFlower GreenMeadow Elephants Infinite-Sea_by_Aury88 Elephants_3840x2160 \
        rhythm Elephants_5640x3172 Kleiber_by_Lukas_Baubkus string 2004default Storm Wood; do
    f=$(find "$work/x" -name "$name.jpg" | head -1)
    [ -n "$f" ] || { echo "large photos: $name.jpg is missing from the packages" >&2; exit 1; }
    cp "$f" "$DEST/photos/"
done
if [ -d "$DATA/edge-cases/large" ]; then
    cp "$DATA"/edge-cases/large/*.jpg "$DEST/photos/"
else
    for name in Fossa_by_Jasper_Roks Painting-Colors_by__herobrine7gamer; do
        cp "$(find "$work/x" -name "$name.jpg" | head -1)" "$DEST/photos/"
    done
fi
echo "large photos: $DEST ($(ls "$DEST/photos" | wc -l) files)"
