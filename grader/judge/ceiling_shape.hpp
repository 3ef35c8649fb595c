// The launch of the streaming-read kernel that a ceiling was measured with (judge/timing.hpp).
#pragma once

namespace workbook {

//! Blocks per SM and 16-byte loads in flight a thread. A reference's Bandwidth test screens every
//! shape and reports the one it measured its ceiling with; the grader hands that one to the judge of
//! the same chapter's submissions (--ceiling-shape), which measures its ceiling with it alone, so that
//! its time with the GPU to itself holds no screen. The shape is a fact of the GPU, not of the code.
struct CeilingShape {
  int blocks_per_sm = 0;
  int loads = 0;
  //! Whether it names a shape (both zero: none known, screen them all).
  bool known() const { return blocks_per_sm > 0 && loads > 0; }
};

}  // namespace workbook
