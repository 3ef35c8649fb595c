// The class reports, made from the submissions' JSON reports in an output
// folder: after a run on one machine, or once every shard of a Slurm array is done.
#pragma once

#include <string>
#include <vector>

#include "judge/manifest.hpp"

namespace grader {

//! Reads every <out_dir>/<id>/report.json and writes <out_dir>/gradebook.csv,
//! junit.xml and summary.txt, printing the summary. `ids_file` (may be "")
//! maps submission ids to student ids. Returns 0, or 2 having said why not.
int merge_class(const std::string& out_dir, const workbook::Manifest& manifest, const std::string& ids_file,
                const std::vector<std::string>& slugs);

}  // namespace grader
