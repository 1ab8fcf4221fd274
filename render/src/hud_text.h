// Internal header, not API: every text of the HUD drawn as one geometry of glyph quads over one
// glyph atlas, with the fixed pipeline. Under a software rasteriser (Mesa llvmpipe) osgText's
// per-text drawables made the HUD's 500-odd glyphs cost about as much as the whole 3D scene; one
// draw of plain textured quads costs a fraction of it. The vertices are rebuilt only when a text
// changes. Glyphs come from the font through osgText (FreeType), rasterised once at the HUD's
// pixel size, so they land on whole pixels.
#pragma once

#include <osg/Geometry>
#include <osg/ref_ptr>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace osgText {
class Font;
}

namespace sim::render {

class TextLayer {
 public:
  /// Rasterises printable ASCII from `font` at `pixel_size`; lines `line_height` px apart.
  TextLayer(osgText::Font& font, int pixel_size, double line_height);

  /// A text block whose first line's baseline starts at (x, y), pixels from the bottom left; its
  /// lines go down. Returns its handle.
  std::size_t add(double x, double y, const std::array<float, 4>& rgba);
  /// Sets a block's text ('\n' separates lines; other characters outside ASCII 32-126 show as
  /// '?'). Nothing is rebuilt when it is unchanged.
  void set(std::size_t block, std::string_view text);
  const std::string& text(std::size_t block) const { return blocks_[block].text; }
  /// Moves a block's first baseline (rebuilds when it moved).
  void move(std::size_t block, double x, double y);
  /// Rebuilds the quads if a text changed since the last call.
  void update();
  osg::Geometry* geometry() const { return geometry_.get(); }
  /// The width of a line in pixels.
  double width(std::string_view line) const;

 private:
  struct Glyph {
    float u0 = 0, v0 = 0, u1 = 0, v1 = 0;  // atlas texture coordinates
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // quad corners from the pen, px
    float advance = 0;                     // px
  };
  struct Block {
    double x = 0, y = 0;
    std::array<float, 4> rgba{};
    std::string text;
  };
  const Glyph& glyph(char c) const;

  std::array<Glyph, 95> glyphs_{};  // ' ' .. '~'
  double line_height_;
  std::vector<Block> blocks_;
  bool changed_ = true;
  osg::ref_ptr<osg::Geometry> geometry_;
};

}  // namespace sim::render
