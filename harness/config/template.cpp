#include "harness/config/template.h"

#include <algorithm>

namespace faultline::harness {
namespace {

bool Has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "(none)" : out;
}

// One placeholder: `word` or `word:arg`.
struct Token {
  std::string_view word;
  std::string_view arg;
  bool has_arg = false;
};

Token Split(std::string_view inner) {
  Token t;
  auto colon = inner.find(':');
  t.word = inner.substr(0, colon);
  if (colon != std::string_view::npos) {
    t.has_arg = true;
    t.arg = inner.substr(colon + 1);
  }
  return t;
}

// Walks `text`, calling `literal(piece)` and `placeholder(inner, offset)`.
// Returns the offset of an unclosed '{' or a lone '}', or npos.
template <typename Lit, typename Ph>
std::size_t Walk(std::string_view text, Lit literal, Ph placeholder) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      literal("{");
      i += 2;
    } else if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      literal("}");
      i += 2;
    } else if (c == '{') {
      auto close = text.find('}', i + 1);
      if (close == std::string_view::npos) return i;
      auto open = text.find('{', i + 1);
      if (open != std::string_view::npos && open < close) return i;
      placeholder(text.substr(i + 1, close - i - 1), i);
      i = close + 1;
    } else if (c == '}') {
      return i;
    } else {
      auto next = text.find_first_of("{}", i);
      if (next == std::string_view::npos) next = text.size();
      literal(text.substr(i, next - i));
      i = next;
    }
  }
  return std::string_view::npos;
}

const std::vector<std::string>& NodeWords() {
  static const std::vector<std::string> k = {"name", "id", "index",
                                             "ip",   "n",  "config_dir"};
  return k;
}

std::optional<TemplateError> CheckOne(std::string_view inner,
                                      const TemplateNames& names) {
  const Token t = Split(inner);
  const std::string word(t.word);
  auto error = [&](std::string message, std::string hint) {
    return TemplateError{0, std::move(message), std::move(hint)};
  };
  const bool port_arg = word == "port" || word == "peers" ||
                        word == "peer_names" || word == "peer_urls";
  if (port_arg) {
    if (!names.peers && word != "port") {
      return error("{" + word + ":...} cannot be used here",
                   "a list's per-peer template uses {name} {id} {index} {ip} "
                   "{port:P} of that peer");
    }
    if (!t.has_arg || t.arg.empty()) {
      return error(
          "{" + word + "} needs a port name, as in {" + word + ":client}",
          "declared ports: " + Join(names.ports));
    }
    if (!Has(names.ports, t.arg)) {
      return error("port `" + std::string(t.arg) + "` is not declared",
                   "declare it under target.ports (declared: " +
                       Join(names.ports) + ")");
    }
    return std::nullopt;
  }
  if (word == "list") {
    if (!names.peers) {
      return error("{list:...} cannot be used inside a list", "");
    }
    if (!t.has_arg || !Has(names.lists, t.arg)) {
      return error("list `" + std::string(t.arg) + "` is not declared",
                   "declare it under target.lists (declared: " +
                       Join(names.lists) + ")");
    }
    return std::nullopt;
  }
  if (t.has_arg) {
    return error("placeholder {" + std::string(inner) + "} is unknown",
                 "only port, peers, peer_names, peer_urls and list take an "
                 "argument; write {{ for a literal brace");
  }
  if (Has(NodeWords(), word) || Has(names.extra, word)) return std::nullopt;
  if (word == "peer_ips" && names.peers) return std::nullopt;
  if ((word == "dir" || word == "data" || word == "log") && names.node_files) {
    return std::nullopt;
  }
  std::vector<std::string> known = NodeWords();
  if (names.node_files) known.insert(known.end(), {"dir", "data", "log"});
  known.insert(known.end(), {"port:P"});
  if (names.peers) {
    known.insert(known.end(), {"peers:P", "peer_names:P", "peer_urls:P",
                               "peer_ips", "list:L"});
  }
  known.insert(known.end(), names.extra.begin(), names.extra.end());
  return error("placeholder {" + word + "} is unknown here",
               "known: " + Join(known) + "; write {{ for a literal brace");
}

int PortOf(const TemplateContext& ctx, std::string_view name) {
  for (const auto& [n, p] : ctx.ports) {
    if (n == name) return p;
  }
  return 0;
}

std::string PeerList(const TemplateContext& ctx, std::string_view word,
                     std::string_view port_name) {
  std::string out;
  const std::string port = std::to_string(PortOf(ctx, port_name));
  for (std::size_t i = 0; i < ctx.nodes.size(); ++i) {
    const TemplatePeer& p = ctx.nodes[i];
    if (!out.empty()) out += ",";
    if (word == "peers") out += p.ip + ":" + port;
    if (word == "peer_names") out += p.name + "=" + p.ip + ":" + port;
    if (word == "peer_urls") out += p.name + "=http://" + p.ip + ":" + port;
    if (word == "peer_ips") out += p.ip;
  }
  return out;
}

}  // namespace

std::optional<TemplateError> CheckTemplate(std::string_view text,
                                           const TemplateNames& names) {
  std::optional<TemplateError> first;
  const std::size_t bad = Walk(
      text, [](std::string_view) {},
      [&](std::string_view inner, std::size_t offset) {
        if (first) return;
        if (auto e = CheckOne(inner, names)) {
          e->offset = offset;
          first = std::move(e);
        }
      });
  if (first) return first;
  if (bad != std::string_view::npos) {
    return TemplateError{bad, text[bad] == '{' ? "unclosed `{`" : "lone `}`",
                         "close every placeholder, or write {{ and }} for "
                         "literal braces"};
  }
  return std::nullopt;
}

std::string ExpandTemplate(std::string_view text, const TemplateContext& ctx) {
  std::string out;
  const TemplatePeer* self =
      ctx.self >= 0 && static_cast<std::size_t>(ctx.self) < ctx.nodes.size()
          ? &ctx.nodes[static_cast<std::size_t>(ctx.self)]
          : nullptr;
  Walk(
      text, [&](std::string_view piece) { out += piece; },
      [&](std::string_view inner, std::size_t) {
        const Token t = Split(inner);
        const std::string word(t.word);
        if (word == "name" && self) out += self->name;
        if (word == "ip" && self) out += self->ip;
        if (word == "id") out += std::to_string(ctx.self + 1);
        if (word == "index") out += std::to_string(ctx.self);
        if (word == "n") out += std::to_string(ctx.nodes.size());
        if (word == "config_dir") out += ctx.config_dir;
        if (word == "dir") out += ctx.dir;
        if (word == "data") out += ctx.data;
        if (word == "log") out += ctx.log;
        if (word == "port") out += std::to_string(PortOf(ctx, t.arg));
        if (word == "peers" || word == "peer_names" || word == "peer_urls" ||
            word == "peer_ips") {
          out += PeerList(ctx, word, t.arg);
        }
        if (word == "list") {
          for (const PeerListSpec& l : ctx.lists) {
            if (l.name != t.arg) continue;
            std::string joined;
            bool first = true;
            for (std::size_t i = 0; i < ctx.nodes.size(); ++i) {
              if (l.others && static_cast<int>(i) == ctx.self) continue;
              TemplateContext peer;
              peer.nodes = ctx.nodes;
              peer.self = static_cast<int>(i);
              peer.ports = ctx.ports;
              peer.config_dir = ctx.config_dir;
              if (!first) joined += l.separator;
              first = false;
              joined += ExpandTemplate(l.each, peer);
            }
            out += joined;
          }
        }
        auto extra = ctx.extra.find(word);
        if (extra != ctx.extra.end()) out += extra->second;
      });
  return out;
}

std::vector<std::string> ExpandAll(const std::vector<std::string>& texts,
                                   const TemplateContext& ctx) {
  std::vector<std::string> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(ExpandTemplate(t, ctx));
  return out;
}

}  // namespace faultline::harness
