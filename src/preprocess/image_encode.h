// Encoders for Image: JPEG through libjpeg-turbo, PNG through libpng. The tests round-trip images
// through them and the synthetic-dataset generator writes its pictures with them.
#pragma once

#include <cstdint>
#include <vector>

#include "preprocess/image.h"

namespace tessera {

// Baseline JPEG with libjpeg's defaults (YCbCr, 4:2:0 chroma subsampling, the Annex K tables of
// ITU-T T.81 scaled by `quality`, 1 to 100, as jpeg_set_quality does). Deterministic: the same
// image and quality give the same bytes. An invalid image or quality throws Error.
std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality);

// 8-bit RGB PNG (lossless: decode_image gives back the same pixels).
std::vector<std::uint8_t> encode_png(const Image& image);

}  // namespace tessera
