// PNM reading and writing, image resampling and cropping for OCR.
#include <gtest/gtest.h>

#include <string>

#include "sdk/examples/common/image.h"
#include "sdk/examples/ocr/crop.h"
#include "sdk/examples/ocr/preprocess.h"

namespace demo {
namespace {

Status decode(const std::string& bytes, Image* out, bool rgb = true) {
  return decode_pnm(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test", out, rgb);
}

Image gradient(int w, int h) {
  Image img(w, h, 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.at(x, y);
      p[0] = static_cast<uint8_t>(5 * x);
      p[1] = static_cast<uint8_t>(7 * y);
      p[2] = static_cast<uint8_t>(x * y % 256);
    }
  }
  return img;
}

TEST(Pnm, RoundTripAndHeaderVariants) {
  const Image img = gradient(7, 3);
  const std::vector<uint8_t> bytes = encode_pnm(img);
  Image back;
  ASSERT_TRUE(decode_pnm(bytes.data(), bytes.size(), "t", &back).ok());
  EXPECT_EQ(back.pixels, img.pixels);
  // Comments, grey, 16-bit samples.
  ASSERT_TRUE(decode(std::string("P5\n# made by hand\n2 1\n# max\n255\n") + '\x10' + '\xF0', &back).ok());
  ASSERT_EQ(back.channels, 3);
  EXPECT_EQ(back.at(1, 0)[2], 0xF0);
  ASSERT_TRUE(decode(std::string("P5 1 1 1023 ") + '\x03' + '\xFF', &back, false).ok());
  EXPECT_EQ(back.channels, 1);
  EXPECT_EQ(back.pixels[0], 255);
}

TEST(Pnm, BadFilesAreErrors) {
  Image img;
  EXPECT_NE(decode("P3\n1 1\n255\n0 0 0", &img).message().find("P6/P5"), std::string::npos);
  EXPECT_NE(decode("P6\n1 x\n255\n", &img).message().find("malformed"), std::string::npos);
  EXPECT_NE(decode("P6\n0 5\n255\n", &img).message().find("bad image size"), std::string::npos);
  EXPECT_NE(decode("P6\n99999 99999\n255\n", &img).message().find("bad image size"), std::string::npos);
  EXPECT_NE(decode("P6\n2 2\n70000\n", &img).message().find("maxval"), std::string::npos);
  EXPECT_NE(decode("P6\n2 2\n255\nabc", &img).message().find("truncated"), std::string::npos);
  EXPECT_FALSE(read_pnm("/nonexistent.ppm", &img).ok());
}

TEST(Preprocess, BilinearLikeOpenCv) {
  Image two(2, 1, 1);
  two.pixels = {0, 255};
  const Image four = resize_bilinear(two, 4, 1);
  EXPECT_EQ(four.pixels, (std::vector<uint8_t>{0, 64, 191, 255}));
  const Image g = gradient(9, 5);
  EXPECT_EQ(resize_bilinear(g, 9, 5).pixels, g.pixels);
}

TEST(Preprocess, PlanesAreBgrNormalised) {
  Image px(1, 1, 3);
  px.pixels = {255, 0, 51};           // R, G, B
  std::vector<float> t(3 * 2, 7.0f);  // tensor 2 wide: column 1 is padding, left alone
  write_bgr_planes(px, kRecNormalization, t.data(), 2);
  EXPECT_NEAR(t[0], -0.6f, 1e-6);  // B
  EXPECT_NEAR(t[2], -1.0f, 1e-6);  // G
  EXPECT_NEAR(t[4], 1.0f, 1e-6);   // R
  EXPECT_EQ(t[1], 7.0f);
  write_bgr_planes(px, kDetNormalization, t.data(), 2);
  EXPECT_NEAR(t[0], (0.2f - 0.485f) / 0.229f, 1e-5);
}

TEST(Crop, UprightQuadIsTheSubImage) {
  const Image page = gradient(40, 30);
  const Quad q = {PointF{10, 5}, PointF{30, 5}, PointF{30, 15}, PointF{10, 15}};
  const Image c = crop_quad(page, q);
  ASSERT_EQ(c.width, 20);
  ASSERT_EQ(c.height, 10);
  for (int y = 0; y < c.height; ++y) {
    for (int x = 0; x < c.width; ++x) {
      for (int k = 0; k < 3; ++k) ASSERT_EQ(c.at(x, y)[k], page.at(10 + x, 5 + y)[k]) << x << "," << y;
    }
  }
}

TEST(Crop, TallCropsAreTurnedAndTurnsCompose) {
  const Image page = gradient(40, 30);
  const Image tall = crop_quad(page, {PointF{5, 2}, PointF{11, 2}, PointF{11, 22}, PointF{5, 22}});
  EXPECT_EQ(tall.width, 20);  // 6 x 20 turned a quarter
  EXPECT_EQ(tall.height, 6);
  EXPECT_EQ(tall.at(0, 0)[0], page.at(10, 2)[0]);  // the top-right corner comes first
  EXPECT_EQ(rotate_180(rotate_180(page)).pixels, page.pixels);
  const Image r = rotate_90_ccw(page);
  EXPECT_EQ(r.width, 30);
  EXPECT_EQ(r.at(0, 0)[0], page.at(39, 0)[0]);
  EXPECT_EQ(rotate_90_ccw(rotate_90_ccw(r)).pixels, rotate_90_ccw(rotate_180(page)).pixels);
}

}  // namespace
}  // namespace demo
