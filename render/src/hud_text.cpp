#include "hud_text.h"

#include <osg/BlendFunc>
#include <osg/TexEnv>
#include <osg/Texture2D>
#include <osgText/Font>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sim::render {

namespace {
constexpr int kFirst = 32, kLast = 126;
// The dark copy under each glyph, one pixel right and down: legible on the sky and the ground.
constexpr float kShadowAlpha = 0.7f;
}  // namespace

TextLayer::TextLayer(osgText::Font& font, int pixel_size, double line_height)
    : line_height_(line_height) {
  const osgText::FontResolution resolution(static_cast<unsigned>(pixel_size),
                                           static_cast<unsigned>(pixel_size));
  std::vector<osg::ref_ptr<osgText::Glyph>> rasters;
  int cell_w = 1, cell_h = 1;
  for (int c = kFirst; c <= kLast; ++c) {
    osg::ref_ptr<osgText::Glyph> g = font.getGlyph(resolution, static_cast<unsigned>(c));
    rasters.push_back(g);
    if (g) {
      cell_w = std::max(cell_w, g->s());
      cell_h = std::max(cell_h, g->t());
    }
  }
  // Pixels per font unit: the glyph metrics are in units of the font size.
  double scale = pixel_size;
  for (const auto& g : rasters) {
    if (g && g->getHeight() > 0.0f && g->t() > 2) {
      scale = static_cast<double>(g->t()) / g->getHeight();
      break;
    }
  }
  // One atlas: a 16-column grid of cells with a pixel between them (no bleeding when sampled).
  constexpr int kColumns = 16;
  const int pitch_w = cell_w + 2, pitch_h = cell_h + 2;
  const int rows = (kLast - kFirst + 1 + kColumns - 1) / kColumns;
  int width = 1, height = 1;
  while (width < kColumns * pitch_w) width *= 2;
  while (height < rows * pitch_h) height *= 2;
  osg::ref_ptr<osg::Image> atlas = new osg::Image;
  atlas->allocateImage(width, height, 1, GL_ALPHA, GL_UNSIGNED_BYTE);
  std::memset(atlas->data(), 0, atlas->getTotalSizeInBytes());
  for (int i = 0; i <= kLast - kFirst; ++i) {
    const osgText::Glyph* g = rasters[static_cast<std::size_t>(i)].get();
    Glyph& out = glyphs_[static_cast<std::size_t>(i)];
    if (g == nullptr) continue;
    out.advance = static_cast<float>(std::round(g->getHorizontalAdvance() * scale));
    if (g->s() <= 0 || g->t() <= 0 || g->data() == nullptr) continue;
    const int cx = (i % kColumns) * pitch_w + 1, cy = (i / kColumns) * pitch_h + 1;
    const int bytes = static_cast<int>(g->getPixelSizeInBits() / 8);
    for (int y = 0; y < g->t(); ++y) {
      for (int x = 0; x < g->s(); ++x) {
        // Glyph images are alpha (or luminance-alpha): the last byte of a pixel is its coverage.
        *atlas->data(cx + x, cy + y) = g->data(x, y)[bytes - 1];
      }
    }
    const osg::Vec2 bearing = g->getHorizontalBearing();  // bottom left of the glyph, font units
    out.x0 = static_cast<float>(std::round(bearing.x() * scale));
    out.y0 = static_cast<float>(std::round(bearing.y() * scale));
    out.x1 = out.x0 + static_cast<float>(g->s());
    out.y1 = out.y0 + static_cast<float>(g->t());
    out.u0 = static_cast<float>(cx) / static_cast<float>(width);
    out.v0 = static_cast<float>(cy) / static_cast<float>(height);
    out.u1 = static_cast<float>(cx + g->s()) / static_cast<float>(width);
    out.v1 = static_cast<float>(cy + g->t()) / static_cast<float>(height);
  }
  osg::ref_ptr<osg::Texture2D> texture = new osg::Texture2D(atlas.get());
  // Glyphs are drawn at their raster size on whole pixels: nearest texels are exact.
  texture->setFilter(osg::Texture::MIN_FILTER, osg::Texture::NEAREST);
  texture->setFilter(osg::Texture::MAG_FILTER, osg::Texture::NEAREST);
  texture->setResizeNonPowerOfTwoHint(false);

  geometry_ = new osg::Geometry;
  geometry_->setName("hud_text");
  geometry_->setVertexArray(new osg::Vec3Array);
  geometry_->setTexCoordArray(0, new osg::Vec2Array, osg::Array::BIND_PER_VERTEX);
  geometry_->setColorArray(new osg::Vec4Array, osg::Array::BIND_PER_VERTEX);
  geometry_->addPrimitiveSet(new osg::DrawArrays(GL_QUADS, 0, 0));
  geometry_->setDataVariance(osg::Object::DYNAMIC);
  geometry_->setUseDisplayList(false);
  geometry_->setUseVertexBufferObjects(true);
  osg::StateSet* state = geometry_->getOrCreateStateSet();
  state->setTextureAttributeAndModes(0, texture.get(), osg::StateAttribute::ON);
  state->setTextureAttribute(0, new osg::TexEnv(osg::TexEnv::MODULATE));
  state->setMode(GL_BLEND, osg::StateAttribute::ON);
  state->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));
}

const TextLayer::Glyph& TextLayer::glyph(char c) const {
  const int code = static_cast<unsigned char>(c);
  const int index = code >= kFirst && code <= kLast ? code - kFirst : '?' - kFirst;
  return glyphs_[static_cast<std::size_t>(index)];
}

double TextLayer::width(std::string_view line) const {
  double w = 0.0;
  for (const char c : line) w += glyph(c).advance;
  return w;
}

std::size_t TextLayer::add(double x, double y, const std::array<float, 4>& rgba) {
  blocks_.push_back({x, y, rgba, {}});
  changed_ = true;
  return blocks_.size() - 1;
}

void TextLayer::set(std::size_t block, std::string_view text) {
  Block& b = blocks_.at(block);
  if (b.text == text) return;
  b.text.assign(text);
  changed_ = true;
}

void TextLayer::move(std::size_t block, double x, double y) {
  Block& b = blocks_.at(block);
  if (b.x == x && b.y == y) return;
  b.x = x;
  b.y = y;
  changed_ = true;
}

void TextLayer::update() {
  if (!changed_) return;
  changed_ = false;
  auto& vertices = *static_cast<osg::Vec3Array*>(geometry_->getVertexArray());
  auto& coords = *static_cast<osg::Vec2Array*>(geometry_->getTexCoordArray(0));
  auto& colours = *static_cast<osg::Vec4Array*>(geometry_->getColorArray());
  vertices.clear();  // keeps the capacity
  coords.clear();
  colours.clear();
  const auto quad = [&](const Glyph& g, float x, float y, const osg::Vec4& colour) {
    vertices.push_back(osg::Vec3(x + g.x0, y + g.y0, 0));
    vertices.push_back(osg::Vec3(x + g.x1, y + g.y0, 0));
    vertices.push_back(osg::Vec3(x + g.x1, y + g.y1, 0));
    vertices.push_back(osg::Vec3(x + g.x0, y + g.y1, 0));
    coords.push_back(osg::Vec2(g.u0, g.v0));
    coords.push_back(osg::Vec2(g.u1, g.v0));
    coords.push_back(osg::Vec2(g.u1, g.v1));
    coords.push_back(osg::Vec2(g.u0, g.v1));
    for (int k = 0; k < 4; ++k) colours.push_back(colour);
  };
  // All shadows first, then all glyphs: a later glyph's shadow never covers an earlier glyph.
  for (const bool shadow : {true, false}) {
    for (const Block& b : blocks_) {
      const osg::Vec4 colour = shadow ? osg::Vec4(0, 0, 0, kShadowAlpha * b.rgba[3])
                                      : osg::Vec4(b.rgba[0], b.rgba[1], b.rgba[2], b.rgba[3]);
      float x = static_cast<float>(std::round(b.x)) + (shadow ? 1.0f : 0.0f);
      float y = static_cast<float>(std::round(b.y)) - (shadow ? 1.0f : 0.0f);
      const float left = x;
      for (const char c : b.text) {
        if (c == '\n') {
          x = left;
          y -= static_cast<float>(line_height_);
          continue;
        }
        const Glyph& g = glyph(c);
        if (g.x1 > g.x0) quad(g, x, y, colour);
        x += g.advance;
      }
    }
  }
  vertices.dirty();
  coords.dirty();
  colours.dirty();
  static_cast<osg::DrawArrays*>(geometry_->getPrimitiveSet(0))
      ->setCount(static_cast<GLsizei>(vertices.size()));
  geometry_->dirtyBound();
}

}  // namespace sim::render
