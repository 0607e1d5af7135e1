// Image: one decoded picture as 8-bit RGB, and the decoders that make one from a JPEG or PNG file.
// Every way a file can be unreadable (unknown format, truncated, corrupt, too large) throws
// tessera::Error naming the sample, so one bad file in a data set fails loudly and never crashes
// the data service or yields a half-gray picture.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessera {

// Channels of a decoded pixel: red, green, blue.
inline constexpr int kRgbChannels = 3;
// 8-bit RGB, row-major, 3 channels: pixel (y, x) channel c is rgb[(y * width + x) * 3 + c].
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

// Largest image decoded: 2^28 pixels = 768 MiB of RGB. A header is only a few bytes, so without a
// bound a 100-byte file can ask for 4 x 10^9 pixels (JPEG sizes are 16-bit, ITU-T T.81 B.2.2;
// libjpeg allows up to 65500 a side). The bound sits above Pillow's own decompression-bomb
// threshold (2 x 89,478,485 pixels, PIL/Image.py MAX_IMAGE_PIXELS), so every image that
// Pillow-based pipelines accept decodes here too. The size is checked before any pixel buffer is
// allocated; a progressive JPEG at the limit also needs libjpeg's coefficient buffer (2 bytes per
// sample), the decoder's largest allocation besides the output.
inline constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 28;

// Decodes a JPEG (starts FF D8 FF, ITU-T T.81 B.1.1.3 SOI + a marker) or a PNG (the 8-byte
// signature of ISO/IEC 15948 5.2) to 8-bit RGB. Other inputs are converted the way Pillow's
// Image.convert("RGB") does for 8-bit ones: gray is replicated, a palette is looked up, alpha is
// dropped without compositing, and there is no gamma or ICC colour management. 16-bit samples keep
// their high byte (libpng's png_set_strip_16, as Pillow reads 16-bit RGB). CMYK JPEGs throw.
// `name` is the sample's name for errors, e.g. "sample 12 (img/cat.jpg)".
Image decode_image(std::span<const std::uint8_t> bytes, const std::string& name);

// Reads and decodes the file at `path`; a missing or unreadable file throws Error(name, ...).
Image read_image_file(const std::string& path, const std::string& name);

// Throws Error(field, ...) unless `image` is non-empty, within kMaxImagePixels and holds exactly
// width * height * 3 bytes: what resize, patchify and the encoders rely on.
void check_image(const Image& image, const std::string& field);

}  // namespace tessera
