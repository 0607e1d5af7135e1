// preprocess/image.h and image_encode.h: PNG round trips are lossless and JPEG ones stay within a
// stated error; every PNG colour type (gray 1 to 16 bits, palette, alpha, interlaced) and gray JPEG
// become 8-bit RGB (gray replicated, alpha dropped, 16-bit to its high byte) and CMYK JPEG throws;
// truncated, corrupt, random and oversized inputs always throw an Error naming the sample, never
// crash and never return a picture.
#include "preprocess/image.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <jpeglib.h>
#include <png.h>

#include "common/thrown_field.h"
#include "core/seeded_random.h"
#include "preprocess/image_encode.h"

namespace tessera {
namespace {

using Bytes = std::vector<std::uint8_t>;
using testing::thrown_field;
const std::string kName = "sample 12 (img/cat.jpg)";

// A smooth gradient (the content JPEG is designed for): red along x, green along y, blue falling.
Image gradient(int width, int height) {
  Image image{width, height, Bytes(static_cast<std::size_t>(width) * height * 3)};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      std::uint8_t* p = image.rgb.data() + (static_cast<std::size_t>(y) * width + x) * 3;
      p[0] = static_cast<std::uint8_t>(x * 255 / (width - 1));
      p[1] = static_cast<std::uint8_t>(y * 255 / (height - 1));
      p[2] = static_cast<std::uint8_t>(255 - (p[0] + p[1]) / 2);
    }
  return image;
}

Image noise(int width, int height, std::uint64_t seed) {
  SeededRandom random(seed);
  Image image{width, height, Bytes(static_cast<std::size_t>(width) * height * 3)};
  for (auto& v : image.rgb) v = static_cast<std::uint8_t>(random.below(256));
  return image;
}

double mean_absolute_error(const Image& a, const Image& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.rgb.size(); ++i) sum += std::abs(a.rgb[i] - b.rgb[i]);
  return sum / static_cast<double>(a.rgb.size());
}

// A PNG written with libpng's full API, for the colour types encode_png never writes. `rows` holds
// the samples as PNG stores them (sub-byte pixels packed, 16-bit big-endian).
struct RawPng {
  int width = 0, height = 0, color_type = PNG_COLOR_TYPE_RGB, bit_depth = 8;
  bool interlaced = false;
  Bytes rows;
  std::vector<png_color> palette;
  Bytes palette_alpha;
};

Bytes write_png(const RawPng& raw) {
  Bytes out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, [](png_structp p, png_bytep data, std::size_t length) {
    static_cast<Bytes*>(png_get_io_ptr(p))->insert(static_cast<Bytes*>(png_get_io_ptr(p))->end(), data, data + length);
  }, nullptr);
  png_set_IHDR(png, info, raw.width, raw.height, raw.bit_depth, raw.color_type,
               raw.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!raw.palette.empty()) png_set_PLTE(png, info, raw.palette.data(), static_cast<int>(raw.palette.size()));
  if (!raw.palette_alpha.empty())
    png_set_tRNS(png, info, raw.palette_alpha.data(), static_cast<int>(raw.palette_alpha.size()), nullptr);
  png_write_info(png, info);
  const std::size_t stride = raw.rows.size() / static_cast<std::size_t>(raw.height);
  std::vector<png_bytep> rows;
  for (int y = 0; y < raw.height && stride > 0; ++y)
    rows.push_back(const_cast<png_bytep>(raw.rows.data()) + y * stride);
  if (!rows.empty()) {
    png_write_image(png, rows.data());  // runs the Adam7 passes itself when interlaced
    png_write_end(png, nullptr);
  } else {  // no rows: the header and an empty IDAT (where png_read_info stops), for size limits
    png_write_chunk(png, reinterpret_cast<png_const_bytep>("IDAT"), nullptr, 0);
  }
  png_destroy_write_struct(&png, &info);
  return out;
}

// A gray or CMYK JPEG written with libjpeg directly (encode_jpeg writes only RGB).
Bytes write_raw_jpeg(const Bytes& samples, int width, int height, J_COLOR_SPACE space) {
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);
  jpeg_create_compress(&info);
  unsigned char* buffer = nullptr;  // jpeg_mem_dest mallocs it
  unsigned long size = 0;
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = width, info.image_height = height;
  info.input_components = static_cast<int>(samples.size()) / (width * height), info.in_color_space = space;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 95, TRUE);
  jpeg_start_compress(&info, TRUE);
  for (int y = 0; y < height; ++y) {
    JSAMPROW row = const_cast<JSAMPLE*>(samples.data() + y * width * info.input_components);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  Bytes out(buffer, buffer + size);
  jpeg_destroy_compress(&info);
  std::free(buffer);
  return out;
}

// Where `needle` first occurs in `bytes` (bytes.size() when it does not).
std::size_t offset_of(const Bytes& bytes, const Bytes& needle) {
  const auto at = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  return static_cast<std::size_t>(at - bytes.begin());
}

// The Error `fn` throws, or a test failure when it returns.
template <typename Fn>
Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("<none>", "", "");
}
Error decode_error(const Bytes& bytes) { return error_of([&] { decode_image(bytes, kName); }); }

TEST(Image, PngRoundTripIsByteForByte) {
  for (const Image& image : {gradient(64, 48), noise(31, 17, 5), noise(1, 1, 6)}) {
    const Image back = decode_image(encode_png(image), kName);
    EXPECT_EQ(std::pair(back.width, back.height), std::pair(image.width, image.height));
    EXPECT_EQ(back.rgb, image.rgb);
  }
}

TEST(Image, JpegRoundTripAtQuality95IsWithinOneAndAHalfLevels) {
  // Measured with libjpeg-turbo 2.1: 0.74 levels mean absolute error on this gradient (4:2:0
  // chroma and quantisation); the 2x margin is for other libjpeg builds.
  const Image image = gradient(64, 48);
  const Bytes jpeg = encode_jpeg(image, 95);
  const Image back = decode_image(jpeg, kName);
  ASSERT_EQ(std::pair(back.width, back.height), std::pair(64, 48));
  EXPECT_LT(mean_absolute_error(image, back), 1.5);
  EXPECT_EQ(encode_jpeg(image, 95), jpeg);  // deterministic
  // Lower quality quantises more coarsely (libjpeg's quality scaling), so it errs more.
  EXPECT_GT(mean_absolute_error(image, decode_image(encode_jpeg(image, 20), kName)),
            mean_absolute_error(image, back));
}

TEST(Image, GrayJpegBecomesRgbWithEqualChannels) {
  const Image source = gradient(40, 24);
  Bytes gray;
  for (std::size_t i = 0; i < source.rgb.size(); i += 3) gray.push_back(source.rgb[i]);
  const Image back = decode_image(write_raw_jpeg(gray, 40, 24, JCS_GRAYSCALE), kName);
  ASSERT_EQ(back.rgb.size(), gray.size() * 3);
  double error = 0;
  for (std::size_t i = 0; i < gray.size(); ++i) {
    EXPECT_TRUE(back.rgb[3 * i] == back.rgb[3 * i + 1] && back.rgb[3 * i] == back.rgb[3 * i + 2]) << i;
    error += std::abs(back.rgb[3 * i] - gray[i]);
  }
  EXPECT_LT(error / static_cast<double>(gray.size()), 1.5);
}

TEST(Image, CmykJpegThrowsRatherThanGuessingItsColours) {
  const Error e = decode_error(write_raw_jpeg(Bytes(8 * 8 * 4, 100), 8, 8, JCS_CMYK));
  EXPECT_NE(e.problem().find("CMYK"), std::string::npos) << e.what();
}

TEST(Image, EveryPngColourTypeBecomes8BitRgb) {
  // Each case: the PNG and the RGB of its two pixels (x = 0, 1; one row).
  struct Case { const char* what; RawPng png; Bytes rgb; };
  const std::vector<png_color> palette{{10, 20, 30}, {200, 100, 50}};
  const std::vector<Case> cases{
      {"gray 8-bit", {2, 1, PNG_COLOR_TYPE_GRAY, 8, false, {7, 250}, {}, {}}, {7, 7, 7, 250, 250, 250}},
      {"gray 1-bit", {2, 1, PNG_COLOR_TYPE_GRAY, 1, false, {0x40}, {}, {}}, {0, 0, 0, 255, 255, 255}},
      {"gray 16-bit keeps the high byte", {2, 1, PNG_COLOR_TYPE_GRAY, 16, false, {0x12, 0x34, 0xAB, 0xFF}, {}, {}},
       {0x12, 0x12, 0x12, 0xAB, 0xAB, 0xAB}},
      {"gray + alpha drops alpha", {2, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 8, false, {9, 0, 99, 128}, {}, {}},
       {9, 9, 9, 99, 99, 99}},
      {"RGBA drops alpha, no compositing", {2, 1, PNG_COLOR_TYPE_RGBA, 8, false, {1, 2, 3, 0, 4, 5, 6, 77}, {}, {}},
       {1, 2, 3, 4, 5, 6}},
      {"RGB 16-bit", {2, 1, PNG_COLOR_TYPE_RGB, 16, false, {1, 9, 2, 9, 3, 9, 250, 0, 251, 0, 252, 0}, {}, {}},
       {1, 2, 3, 250, 251, 252}},
      {"palette", {2, 1, PNG_COLOR_TYPE_PALETTE, 8, false, {1, 0}, palette, {}}, {200, 100, 50, 10, 20, 30}},
      {"palette + tRNS drops alpha", {2, 1, PNG_COLOR_TYPE_PALETTE, 8, false, {0, 1}, palette, {0, 128}},
       {10, 20, 30, 200, 100, 50}},
  };
  for (const Case& c : cases) EXPECT_EQ(decode_image(write_png(c.png), kName).rgb, c.rgb) << c.what;
}

TEST(Image, InterlacedPngDecodesToTheSamePixels) {
  const Image image = noise(13, 11, 21);  // not a multiple of Adam7's 8 x 8 block
  EXPECT_EQ(decode_image(write_png({13, 11, PNG_COLOR_TYPE_RGB, 8, true, image.rgb, {}, {}}), kName).rgb, image.rgb);
}

TEST(Image, EveryTruncationThrowsAnErrorNamingTheSample) {
  const Image image = gradient(64, 48);
  constexpr std::size_t kJpegMagic = 3;  // FF D8 FF: shorter cuts are not recognised as JPEG
  for (const Bytes& file : {encode_jpeg(image, 90), encode_png(image)}) {
    const std::size_t n = file.size();
    for (const std::size_t cut : std::vector<std::size_t>{1, 2, 3, 4, 8, 33, n / 4, n / 2, 3 * n / 4, n - 2, n - 1}) {
      const Error e = decode_error(Bytes(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut)));
      EXPECT_EQ(e.field(), kName) << "cut at " << cut << " of " << n;
      EXPECT_EQ(e.allowed(), "a readable JPEG or PNG file");
      // libjpeg only warns at a premature end and fills the rest with gray; here it is an error.
      const bool jpeg = file[0] == 0xFF && cut >= kJpegMagic;
      EXPECT_TRUE(!jpeg || e.problem().find("Premature end of JPEG file") != std::string::npos) << e.what();
    }
  }
}

TEST(Image, CorruptDataThrows) {
  const Image image = gradient(64, 48);
  // A marker halfway through a JPEG's scan data (after SOS, FF DA; ITU-T T.81 B.2.3): libjpeg
  // warns "premature end of data segment" and would fill the rest with gray.
  Bytes jpeg = encode_jpeg(image, 90);
  const std::size_t scan = offset_of(jpeg, {0xFF, 0xDA}), middle = scan + (jpeg.size() - scan) / 2;
  ASSERT_LT(scan, jpeg.size());
  jpeg[middle] = 0xFF, jpeg[middle + 1] = 0xD9;
  EXPECT_NE(decode_error(jpeg).problem().find("Corrupt JPEG data"), std::string::npos);
  // One flipped bit in a PNG's IDAT: its CRC (ISO/IEC 15948 5.3) no longer matches.
  Bytes png = encode_png(image);
  const std::size_t idat = offset_of(png, {'I', 'D', 'A', 'T'});
  ASSERT_LT(idat + 14, png.size());
  png[idat + 14] ^= 0x01;  // 10 bytes into the chunk's data
  EXPECT_EQ(decode_error(png).field(), kName);
}

TEST(Image, RandomBytesThrowWithOrWithoutAValidSignature) {
  SeededRandom random(99);
  const std::vector<Bytes> prefixes{{}, {0xFF, 0xD8, 0xFF}, {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A}};
  for (int trial = 0; trial < 300; ++trial) {
    Bytes bytes = prefixes[static_cast<std::size_t>(trial) % prefixes.size()];
    for (std::uint64_t i = 0, n = 1 + random.below(2000); i < n; ++i)
      bytes.push_back(static_cast<std::uint8_t>(random.below(256)));
    EXPECT_EQ(thrown_field([&] { decode_image(bytes, kName); }), kName) << "trial " << trial;
  }
  EXPECT_EQ(thrown_field([&] { decode_image({}, kName); }), kName);
  const Bytes gif{'G', 'I', 'F', '8', '9', 'a', 1, 0};
  EXPECT_NE(decode_error(gif).problem().find("47 49 46 38"), std::string::npos);
}

void put_be(Bytes& bytes, std::size_t at, std::uint32_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<std::uint8_t>(value >> (8 * (width - 1 - i)));
}

TEST(Image, HeadersBeyondTwoToThe28PixelsThrowBeforeAllocating) {
  // JPEG: SOF0 is FF C0, length (2), precision (1), height (2), width (2) (ITU-T T.81 B.2.2).
  Bytes jpeg = encode_jpeg(gradient(16, 16), 90);
  const std::size_t sof = offset_of(jpeg, {0xFF, 0xC0});
  ASSERT_LT(sof, jpeg.size());
  put_be(jpeg, sof + 5, 60000, 2);
  put_be(jpeg, sof + 7, 60000, 2);
  EXPECT_NE(decode_error(jpeg).problem().find("60000 x 60000"), std::string::npos);
  // PNG: a valid IHDR (libpng writes its CRC) for 60000 x 60000, and no image data.
  const Error e = decode_error(write_png({60000, 60000, PNG_COLOR_TYPE_RGB, 8, false, {}, {}, {}}));
  EXPECT_NE(e.problem().find("2^28"), std::string::npos) << e.what();
}

TEST(Image, ReadImageFileReadsAndNamesTheSampleOnFailure) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_image_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Image image = noise(9, 7, 3);
  const Bytes png = encode_png(image);
  const std::string path = (dir / "a.png").string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  EXPECT_EQ(read_image_file(path, kName).rgb, image.rgb);
  const Error missing = error_of([&] { read_image_file((dir / "missing.jpg").string(), kName); });
  EXPECT_EQ(missing.field(), kName);
  EXPECT_NE(missing.problem().find("missing.jpg"), std::string::npos);  // the path, for the user
  EXPECT_EQ(thrown_field([&] { read_image_file(dir.string(), kName); }), kName);  // a directory
  std::filesystem::remove_all(dir);
}

TEST(ImageEncode, InvalidInputsThrowNamingTheField) {
  for (const int quality : {0, 101}) EXPECT_EQ(thrown_field([&] { encode_jpeg(gradient(8, 8), quality); }), "quality");
  Image short_buffer = gradient(8, 8);
  short_buffer.rgb.pop_back();  // one byte short of 8 x 8 x 3
  EXPECT_EQ(thrown_field([&] { encode_png(short_buffer); }), "image");
  EXPECT_EQ(thrown_field([] { encode_jpeg(Image{}, 90); }), "image");
}

}  // namespace
}  // namespace tessera
