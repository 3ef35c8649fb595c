// A class's submissions: finding them in a folder, naming them, slicing them
// into shards, unpacking archives, and finding the chapters/ tree inside each.
#pragma once

#include <string>
#include <vector>

#include "judge/manifest.hpp"

namespace grader {

struct Submission {
  std::string id;      // the folder or archive name without its extension, made safe for folders
  std::string name;    // that name as given (valid UTF-8): what reports and the gradebook show
  std::string source;  // the folder or archive as found
  bool archive = false;
  std::string fingerprint;  // of what is graded: the archive's bytes, or each chapter's kernel.cu
};

//! Every submission in `dir`, sorted by id: each folder, and each .zip, .tar.gz,
//! .tgz or .tar file. Other entries are listed in `ignored` with the reason.
std::vector<Submission> find_submissions(const std::string& dir, const workbook::Manifest& manifest,
                                         std::vector<std::string>* ignored);

//! The k-th (1-based) of n slices: the submissions whose index in the sorted
//! list is k - 1 modulo n, so every shard gets a share and the slices never overlap.
std::vector<Submission> shard_of(const std::vector<Submission>& all, int k, int n);

//! The chapters/ tree in `dir`: `dir` itself if it holds chapter folders, else
//! `dir/chapters`, else the tree inside the only folder `dir` holds (three
//! levels at most, as archives wrap it). "" if there is none.
std::string locate_chapters(const std::string& dir, const workbook::Manifest& manifest);

//! Unpacks `archive` into the new directory `dest` (grader/unpack.py: no
//! links, no paths out, size limits). "" on success, else why not.
std::string unpack(const std::string& archive, const std::string& dest, const std::string& log);

//! A hex digest of a chapters/ tree's kernel.cu files (FNV-1a, 64 bits).
std::string tree_fingerprint(const std::string& chapters_dir, const workbook::Manifest& manifest);

//! A hex digest of a file's bytes.
std::string file_fingerprint(const std::string& path);

//! Whether the report at `path` may be kept instead of grading `s` again: it is
//! complete, of this grader and report schema, of these chapters and sanitizer
//! setting, and of this very submission (its fingerprint).
bool report_to_keep(const std::string& path, const Submission& s, bool sanitized,
                    const std::vector<std::string>& slugs);

//! Makes a name safe as a folder name and a CSV cell: letters, digits, '.', '-',
//! '_' and '@' kept, anything else '_', never empty or starting with '.'.
std::string safe_id(const std::string& name);

//! Names a submission from the name it was handed in under: its id (safe_id, for folders) and
//! its name as given (valid UTF-8, for what people read).
void name_submission(Submission& s, const std::string& given);

}  // namespace grader
