// The template language of `target: process` (docs/targets/process.md):
// text with placeholders in braces, expanded once per node (and, for resp
// client commands, once per operation).
//
//   {name} {id} {index} {ip} {n}    the node: name (n1), 1-based id,
//                                   0-based index, address, node count
//   {config_dir}                    the config file's directory (absolute)
//   {port:P}                        the port named P in `ports`
//   {dir} {data} {log}              the node's directory, its data
//                                   directory, the current process's log
//   {peers:P}                       ip1:P,ip2:P,...     (every node, in order)
//   {peer_names:P}                  n1=ip1:P,...
//   {peer_urls:P}                   n1=http://ip1:P,...
//   {peer_ips}                      ip1,ip2,...
//   {list:L}                        the custom list L of `lists`
//   {{ and }}                       a literal { and }
// plus the extra words a context allows (the resp client's {key} ...).
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/config/spec.h"

namespace faultline::harness {

// What a template may refer to.
struct TemplateNames {
  std::vector<std::string> ports;  // names of `ports`
  std::vector<std::string> lists;  // names of `lists`
  std::vector<std::string> extra;  // further bare words, e.g. "key"
  bool node_files = true;  // {dir} {data} {log} allowed (not in a list's
                           // per-peer template or on the controller)
  bool peers = true;       // peer lists allowed (not inside a list)
};

struct TemplateError {
  std::size_t offset = 0;  // byte offset of the bad placeholder in the text
  std::string message;
  std::string hint;
};

// nullopt when `text` is a well-formed template over `names`; else the
// first problem (an unclosed brace, an unknown placeholder, a port or list
// that is not declared).
std::optional<TemplateError> CheckTemplate(std::string_view text,
                                           const TemplateNames& names);

struct TemplatePeer {
  std::string name;
  std::string ip;
};

// What a template expands against.
struct TemplateContext {
  std::vector<TemplatePeer> nodes;  // every node, in cluster order
  int self = 0;                     // index into `nodes`
  std::vector<std::pair<std::string, int>> ports;
  std::vector<PeerListSpec> lists;
  std::string dir;
  std::string data;
  std::string log;
  std::string config_dir;
  std::map<std::string, std::string> extra;
};

// Expands a template CheckTemplate accepted (anything it would reject
// expands to nothing).
std::string ExpandTemplate(std::string_view text, const TemplateContext& ctx);
std::vector<std::string> ExpandAll(const std::vector<std::string>& texts,
                                   const TemplateContext& ctx);

}  // namespace faultline::harness
