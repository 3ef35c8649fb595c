// The process-wide list of chapter implementations that registered themselves.
#pragma once

#include <string>
#include <vector>

#include "workbook/contract.hpp"

namespace workbook {

//! The entry for (chapter, subject), or nullptr if none was linked in.
const Entry* find_entry(const std::string& chapter, const std::string& subject);

//! Every entry, in chapter order.
std::vector<Entry> all_entries();

}  // namespace workbook
