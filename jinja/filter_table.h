#pragma once
// The filter registry's parts, internal to the filters_*.cc files: the
// signature every filter has, one table-filling function per family, and the
// attribute helpers several families share. filters.cc merges the families
// into the one table ApplyFilter / IsKnownFilter (builtins.h) consult.

#include <map>
#include <string>

#include "jinja/callable.h"
#include "jinja/value.h"

namespace llmserve::jinja {

class Interpreter;

// A filter: `input | name(args)`. Throws TemplateError on failure.
using FilterFn = Value (*)(Interpreter& interp, const Value& input, CallArgs& args);
// Filter name -> implementation.
using FilterTable = std::map<std::string, FilterFn>;

// Strings: trim, upper, lower, title, capitalize, replace, escape, indent,
// wordcount, center, format, string, safe, tojson (filters_text.cc).
void AddTextFilters(FilterTable* table);
// Numbers: int, float, abs, round (filters_number.cc).
void AddNumberFilters(FilterTable* table);
// Whole sequences and mappings: length, first, last, list, items, sort,
// dictsort, unique, reverse, batch, join, min, max, sum (filters_sequence.cc).
void AddSequenceFilters(FilterTable* table);
// Per item: select, reject, selectattr, rejectattr, map, attr, default
// (filters_item.cc).
void AddItemFilters(FilterTable* table);

// `a.b.c` looked up item-first on each part, as jinja2's make_attrgetter does.
Value AttrPath(const Value& item, const std::string& path);
// An `attribute=` argument as a path string (ints allowed, as jinja2 does).
std::string AttrName(const Value& v);
// Sort key: case-insensitive for strings unless `case_sensitive`.
Value SortKey(const Value& v, bool case_sensitive);

}  // namespace llmserve::jinja
