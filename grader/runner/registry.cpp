#include "runner/registry.hpp"

#include <algorithm>

namespace workbook {
namespace {

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;  // built during static initialization
  return entries;
}

}  // namespace

bool register_entry(const Entry& entry) {
  registry().push_back(entry);
  return true;
}

const Entry* find_entry(const std::string& chapter, const std::string& subject) {
  for (const Entry& e : registry()) {
    if (chapter == e.chapter && subject == e.subject) return &e;
  }
  return nullptr;
}

std::vector<Entry> all_entries() {
  std::vector<Entry> sorted = registry();
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry& a, const Entry& b) { return std::string(a.chapter) < std::string(b.chapter); });
  return sorted;
}

}  // namespace workbook
