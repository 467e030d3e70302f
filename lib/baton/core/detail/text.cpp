#include "baton/core/detail/text.hpp"

#include <locale>
#include <sstream>

namespace baton::detail {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i]))
      ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i]))
      ++i;
    if (i > start)
      words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::string excerpt(std::string_view s) {
  constexpr std::size_t shown = 40;
  std::string out(1, '\'');  // built by appending: g++ 12 warns falsely on "'" + std::string
  out += s.substr(0, shown);
  out += s.size() > shown ? "...'" : "'";
  return out;
}

std::optional<double> parse_double(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-')
    s.remove_prefix(1);
  if (s.empty())
    return std::nullopt;
  double value = 0;
#if defined(__cpp_lib_to_chars)
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
#else
  std::istringstream in{std::string(s)};
  in.imbue(std::locale::classic());
  if (!(in >> value) || in.peek() != std::char_traits<char>::eof())
    return std::nullopt;
#endif
  return value;
}

}  // namespace baton::detail
