// A chapter's verdict from its tests and its bandwidth: status, points, and the failures in the
// order a student should read them.
#pragma once

#include "result.hpp"

namespace grader {

//! Orders the failures, decides the chapter's status and points from its
//! tests and bandwidth.
void score(ChapterResult& r);

}  // namespace grader
