#pragma once
// The checks of `locus train` and `locus bench` options (Note [Option checks]).

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace locus::cli {

/// An integer from `lo` to `hi` in decimal digits; rewritten without leading zeros, since CLI11
/// would read "010" as octal.
CLI::Validator integer_in(int64_t lo, int64_t hi);
/// Any unsigned 64-bit integer in decimal digits ("-1" is refused, not wrapped to 2^64-1).
CLI::Validator unsigned_integer();
/// A finite decimal number from `lo` to `hi`.
CLI::Validator number_in(double lo, double hi);
/// A finite decimal number greater than 0; `example` is shown in the message ("0.001").
CLI::Validator positive_number(const std::string& example);
/// A finite decimal number of 0 or more (a weight decay); `example` is shown in the message.
CLI::Validator non_negative_number(const std::string& example);
/// One of `choices`, exactly.
CLI::Validator one_of(std::vector<std::string> choices);
/// `auto` or a device this machine has; a refusal lists the devices there are.
CLI::Validator device_on_this_machine();
/// A file name that can be written: not a directory, in an existing directory one may write in.
CLI::Validator writable_file();
/// An existing directory; `hint` says what to pass instead.
CLI::Validator existing_directory(const std::string& hint);
/// An existing regular file.
CLI::Validator existing_file();

}  // namespace locus::cli
