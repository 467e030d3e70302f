#pragma once
/// \file
/// Reading numbers and words from text files in the C locale, shared by the readers of extended
/// XYZ and EAM files (internal).

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace baton::detail {

/// Space, tab, carriage return, newline, vertical tab, form feed.
bool is_space(char c);
/// ASCII lower case.
std::string lower(std::string_view s);
/// The words of a line, split at spaces.
std::vector<std::string_view> split_words(std::string_view line);
/// 's' quoted, cut to 40 characters with "..." for error messages.
std::string excerpt(std::string_view s);
/// A whole token as a double in the C locale (a leading '+' allowed; "nan", "inf" accepted), or
/// nothing.
std::optional<double> parse_double(std::string_view s);

/// A whole token as an integer (a leading '+' allowed), or nothing.
template <class Int>
std::optional<Int> parse_integer(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-')
    s.remove_prefix(1);
  Int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return value;
}

}  // namespace baton::detail
