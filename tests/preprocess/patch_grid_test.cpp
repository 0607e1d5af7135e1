// preprocess/patch_grid.h: grid_shape's closed forms (LLaVA-1.5's 24 x 24, native grids computed
// by hand), the native grid's bounds over many sizes, bilinear resize against hand-computed
// half-pixel-centre values, and patchify's layout against the index formula worked out here.
#include "preprocess/patch_grid.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"
#include "core/seeded_random.h"

namespace tessera {
namespace {

using testing::thrown_field;

ResizePolicy native(int patch = 14, int max_side = 1344) {
  return {ResizePolicy::Kind::native, 336, patch, max_side};
}

Image filled(int width, int height, std::uint8_t value) {
  return {width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3, value)};
}

Image random_image(int width, int height, std::uint64_t seed) {
  SeededRandom random(seed);
  Image image = filled(width, height, 0);
  for (auto& v : image.rgb) v = static_cast<std::uint8_t>(random.below(256));
  return image;
}

// One row of gray pixels (all three channels equal), for 1-D resize checks.
Image gray_row(const std::vector<int>& values) {
  Image image = filled(static_cast<int>(values.size()), 1, 0);
  for (std::size_t i = 0; i < values.size(); ++i)
    std::fill_n(image.rgb.begin() + static_cast<std::ptrdiff_t>(3 * i), 3, static_cast<std::uint8_t>(values[i]));
  return image;
}

std::vector<int> red_channel(const Image& image) {
  std::vector<int> out;
  for (std::size_t i = 0; i < image.rgb.size(); i += 3) out.push_back(image.rgb[i]);
  return out;
}

TEST(GridShape, FixedLlava15Is24By24WhateverTheInputSize) {
  const ResizePolicy llava;  // fixed, 336 px, patch 14
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{336, 336}, {1000, 500}, {7, 4000}, {1, 1}}) {
    const GridShape g = grid_shape(w, h, llava);
    EXPECT_EQ(g.rows, 24);
    EXPECT_EQ(g.cols, 24);
    EXPECT_EQ(g.tokens(), 576);
  }
}

TEST(GridShape, NativeMatchesHandComputedGrids) {
  // 1000 x 500, longer side 1000 <= 1344: no downscale; 1000 / 14 = 71.43 -> 71 columns,
  // 500 / 14 = 35.71 -> 36 rows.
  GridShape g = grid_shape(1000, 500, native());
  EXPECT_EQ(g.cols, 71);
  EXPECT_EQ(g.rows, 36);
  EXPECT_EQ(g.tokens(), 2556);
  // 2000 x 1000: downscaled to 1344 x 672 = 96 x 48 patches exactly.
  g = grid_shape(2000, 1000, native());
  EXPECT_EQ(g.cols, 96);
  EXPECT_EQ(g.rows, 48);
  // 1000 x 5: 5 / 14 rounds to 0, kept at one patch.
  g = grid_shape(1000, 5, native());
  EXPECT_EQ(g.rows, 1);
  EXPECT_EQ(g.cols, 71);
  // 21 x 35 with patch 14: 1.5 rounds up to 2, 2.5 up to 3 (halves round up).
  g = grid_shape(21, 35, native());
  EXPECT_EQ(g.cols, 2);
  EXPECT_EQ(g.rows, 3);
  // Portrait 600 x 3000, patch 16, max side 1024: 3000 -> 1024 = 64 patches; 600 * 1024 / 3000
  // = 204.8 px = 12.8 patches -> 13.
  g = grid_shape(600, 3000, native(16, 1024));
  EXPECT_EQ(g.rows, 64);
  EXPECT_EQ(g.cols, 13);
}

TEST(GridShape, NativeGridStaysWithinMaxSideAndKeepsTheAspectRatio) {
  SeededRandom random(4);
  for (int trial = 0; trial < 2000; ++trial) {
    const int w = 1 + static_cast<int>(random.below(5000)), h = 1 + static_cast<int>(random.below(5000));
    const GridShape g = grid_shape(w, h, native());
    ASSERT_GE(g.rows, 1);
    ASSERT_GE(g.cols, 1);
    ASSERT_LE(std::max(g.rows, g.cols) * 14, 1344) << w << " x " << h;
    // Each side is within half a patch of the exactly scaled side (a whole patch at the floor).
    const double scale = std::min(1.0, 1344.0 / std::max(w, h));
    EXPECT_LE(std::abs(g.cols * 14 - w * scale), g.cols == 1 ? 14.0 : 7.0) << w << " x " << h;
    EXPECT_LE(std::abs(g.rows * 14 - h * scale), g.rows == 1 ? 14.0 : 7.0) << w << " x " << h;
  }
}

TEST(GridShape, InvalidPoliciesAndSizesThrowNamingTheField) {
  ResizePolicy p;
  p.patch = 0;
  EXPECT_EQ(thrown_field([&] { grid_shape(10, 10, p); }), "resize.patch");
  p = {};
  p.size = 340;  // not a multiple of 14
  EXPECT_EQ(thrown_field([&] { grid_shape(10, 10, p); }), "resize.size");
  EXPECT_EQ(thrown_field([&] { grid_shape(10, 10, native(14, 1000)); }), "resize.max_side");
  EXPECT_EQ(thrown_field([&] { grid_shape(10, 10, native(14, 0)); }), "resize.max_side");
  EXPECT_EQ(thrown_field([&] { grid_shape(0, 10, native()); }), "image width");
  EXPECT_EQ(thrown_field([&] { grid_shape(10, -3, native()); }), "image height");
}

TEST(ResizeBilinear, ConstantImagesStayConstantUpAndDown) {
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {336, 336}, {1000, 17}}) {
    const Image out = resize_bilinear(filled(37, 23, 173), w, h);
    ASSERT_EQ(out.rgb.size(), static_cast<std::size_t>(w) * h * 3);
    EXPECT_TRUE(std::all_of(out.rgb.begin(), out.rgb.end(), [](std::uint8_t v) { return v == 173; }));
  }
}

TEST(ResizeBilinear, SameSizeIsTheIdentity) {
  const Image image = random_image(29, 13, 8);
  EXPECT_EQ(resize_bilinear(image, 29, 13).rgb, image.rgb);
}

TEST(ResizeBilinear, MatchesHandComputedHalfPixelCentres) {
  // Up 2 -> 4: sample positions (x + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25
  // (clamped to 1), so 0, 25, 75, 100 (OpenCV INTER_LINEAR gives the same).
  EXPECT_EQ(red_channel(resize_bilinear(gray_row({0, 100}), 4, 1)), (std::vector<int>{0, 25, 75, 100}));
  // Down 4 -> 2: positions 0.5 and 2.5: (0 + 100) / 2 = 50, (200 + 255) / 2 = 227.5 -> 228.
  EXPECT_EQ(red_channel(resize_bilinear(gray_row({0, 100, 200, 255}), 2, 1)), (std::vector<int>{50, 228}));
  // Vertically the same weights: a 1 x 2 column [0, 100] to 1 x 4.
  Image column = filled(1, 2, 0);
  std::fill_n(column.rgb.begin() + 3, 3, std::uint8_t{100});
  EXPECT_EQ(red_channel(resize_bilinear(column, 1, 4)), (std::vector<int>{0, 25, 75, 100}));
}

TEST(ResizeBilinear, InvalidInputsThrow) {
  EXPECT_EQ(thrown_field([] { resize_bilinear(filled(4, 4, 0), 0, 4); }), "resize target");
  EXPECT_EQ(thrown_field([] { resize_bilinear(filled(4, 4, 0), 70000, 70000); }), "resize target");
  Image broken = filled(4, 4, 0);
  broken.rgb.resize(5);
  EXPECT_EQ(thrown_field([&] { resize_bilinear(broken, 2, 2); }), "image");
}

TEST(Patchify, PixelYXLandsWhereTheLayoutSays) {
  const int p = 4, width = 12, height = 8;  // a 2 x 3 grid
  const Image image = random_image(width, height, 17);
  const Patches patches = patchify(image, p);
  EXPECT_EQ(patches.grid.rows, 2);
  EXPECT_EQ(patches.grid.cols, 3);
  EXPECT_EQ(patches.patch, p);
  ASSERT_EQ(patches.values.size(), static_cast<std::size_t>(patches.grid.tokens() * p * p * 3));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        const int token = (y / p) * patches.grid.cols + x / p;
        const int within = ((y % p) * p + x % p) * 3 + c;
        EXPECT_EQ(patches.values[static_cast<std::size_t>(token * p * p * 3 + within)],
                  image.rgb[static_cast<std::size_t>((y * width + x) * 3 + c)]);
      }
  // A worked case: pixel (5, 9) is in grid cell (1, 2) = token 5, at (1, 1) inside it.
  EXPECT_EQ(patches.values[5 * 48 + (1 * 4 + 1) * 3], image.rgb[(5 * 12 + 9) * 3]);
}

TEST(Patchify, SizesThatAreNotMultiplesOfThePatchThrow) {
  EXPECT_EQ(thrown_field([] { patchify(filled(28, 27, 0), 14); }), "image");
  EXPECT_EQ(thrown_field([] { patchify(filled(27, 28, 0), 14); }), "image");
  EXPECT_EQ(thrown_field([] { patchify(filled(28, 28, 0), 0); }), "patch");
}

TEST(ToPatchGrid, GivesGridShapesTokenCount) {
  const Image image = random_image(1000, 500, 2);
  const Patches native_patches = to_patch_grid(image, native());
  EXPECT_EQ(native_patches.grid.tokens(), grid_shape(1000, 500, native()).tokens());
  EXPECT_EQ(native_patches.values.size(), static_cast<std::size_t>(2556 * 14 * 14 * 3));
  const Patches fixed = to_patch_grid(image, ResizePolicy{});
  EXPECT_EQ(fixed.grid.tokens(), 576);
  EXPECT_EQ(fixed.values.size(), static_cast<std::size_t>(336 * 336 * 3));
}

}  // namespace
}  // namespace tessera
