// exact_sum_rounded on the command line, for tests/exact_sum_test.py: each input line is one
// case, the floats' bit patterns in hex separated by spaces (an empty line is n = 0); each
// output line is the bits of the correctly rounded sum, in hex.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "judge/exact_sum.hpp"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::vector<float> x;
    std::string word;
    while (words >> word) {
      const std::uint32_t bits = static_cast<std::uint32_t>(std::stoul(word, nullptr, 16));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      x.push_back(f);
    }
    const float s = workbook::exact_sum_rounded(x.data(), x.size());
    std::uint32_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    std::printf("%08x\n", bits);
  }
  return 0;
}
