// The keys of `target: process` (harness/config/spec.h, ProcessSpec;
// docs/targets/process.md): ports, lists, files, setup, processes, status,
// client. Templates are checked once the whole section is read (a port may
// be declared after its first use), each error at the value that holds it.
#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness/config/config_parser.h"
#include "harness/config/template.h"

namespace faultline::harness::config_internal {
namespace {

bool PlainName(const std::string& s) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_-]{0,62}");
  return std::regex_match(s, kName);
}

const std::vector<KnownName>& Signals() {
  static const std::vector<KnownName> k = {{"TERM", "", 1},
                                           {"INT", "", 1},
                                           {"QUIT", "", 1},
                                           {"HUP", "", 1},
                                           {"KILL", "", 1}};
  return k;
}

}  // namespace

// Where a template error at byte `offset` of the value is: on a one-line
// value its column, inside a block the line.
Origin Parser::TemplateOrigin(const Item& it, std::size_t offset) const {
  Origin o = ValueOrigin(it);
  if (!o.from_file() || !it.value.IsScalar()) return o;
  const std::string& text = it.value.Scalar();
  const std::size_t newlines = static_cast<std::size_t>(std::count(
      text.begin(),
      text.begin() + static_cast<long>(std::min(offset, text.size())), '\n'));
  if (text.find('\n') == std::string::npos) {
    o.column += static_cast<int>(offset) + (IsPlain(it.value) ? 0 : 1);
  } else {
    // A block scalar (`content: |`) starts on the line after its indicator.
    o.line += 1 + static_cast<int>(newlines);
  }
  return o;
}

void Parser::Template(const Item& it, const std::string& text,
                      TemplateUse use) {
  pending_templates_.push_back({it, text, use});
}

bool Parser::TemplateList(const Item& it, std::vector<std::string>* out,
                          TemplateUse use) {
  // An argument may be empty (`--save ""`).
  if (!TextList(it, out, /*allow_empty=*/true)) return false;
  for (std::size_t i = 0; i < out->size(); ++i) {
    Item elem{it.key, it.value[i], it.path + "[" + std::to_string(i) + "]",
              it.name};
    Template(elem, (*out)[i], use);
  }
  return true;
}

void Parser::TemplateEnv(const Item& it,
                         std::vector<std::pair<std::string, std::string>>* out,
                         TemplateUse use) {
  Record(it);
  if (IsNothing(it.value)) return;
  if (!it.value.IsMap()) {
    Error(it, "expected a mapping of NAME: value, got " + Got(it.value),
          "e.g. `env: {LANG: C}`");
    return;
  }
  static const std::regex kEnvName("[A-Za-z_][A-Za-z0-9_]*");
  for (auto kv = it.value.begin(); kv != it.value.end(); ++kv) {
    const YAML::Node k = kv->first;
    const YAML::Node v = kv->second;
    Item elem{k, v, it.path + "." + (k.IsScalar() ? k.Scalar() : "?"), it.name};
    if (!k.IsScalar() || !std::regex_match(k.Scalar(), kEnvName)) {
      Error(Item{k, k, elem.path, it.name},
            "`" + (k.IsScalar() ? Shorten(k.Scalar()) : "?") +
                "` is not an environment variable name",
            "letters, digits and '_', not starting with a digit");
      continue;
    }
    std::string value;
    if (!Text(elem, true, &value)) continue;
    Template(elem, value, use);
    out->emplace_back(k.Scalar(), value);
  }
}

void Parser::ProcessReady(const Item& it, ProcessReadySpec* r) {
  Record(it);
  if (!it.value.IsMap()) {
    Error(it, "expected one of {tcp: PORT}, {command: [...]}, {http: {...}}",
          "e.g. `ready: {tcp: client}`");
    return;
  }
  WalkMap(it.value, it.path, ValueOrigin(it),
          {{"tcp",
            [&, r](const Item& x) {
              if (Text(x, false, &r->port)) {
                r->kind = "tcp";
                pending_ports_.push_back({x, r->port});
              }
            }},
           {"command",
            [&, r](const Item& x) {
              if (TemplateList(x, &r->command, TemplateUse::kNode)) {
                r->kind = "command";
              }
            }},
           {"http", [&, r](const Item& x) {
              Record(x);
              r->kind = "http";
              WalkMap(x.value, x.path, ValueOrigin(x),
                      {{"port",
                        [&, r](const Item& y) {
                          if (Text(y, false, &r->port)) {
                            pending_ports_.push_back({y, r->port});
                          }
                        }},
                       {"path",
                        [&, r](const Item& y) {
                          if (Text(y, false, &r->path) && r->path[0] != '/') {
                            Error(y, "must start with /",
                                  "e.g. `path: /health`");
                          }
                        }},
                       {"status", [&, r](const Item& y) {
                          Int(y, 100, 599, &r->status, "an HTTP status code");
                        }}});
              if (r->port.empty()) {
                Error(x, "needs a `port`",
                      "e.g. `http: {port: client, path: /health}`");
              }
            }}});
  if (r->kind.empty() && !prov_->bad.count(it.path)) {
    Error(it, "names no check", "e.g. `ready: {tcp: client}`");
  }
}

void Parser::ProcessItem(const Item& it, ProcessDef* p) {
  WalkMap(
      it.value, it.path, ValueOrigin(it),
      {{"name",
        [&, p](const Item& x) {
          if (Text(x, false, &p->name) && !PlainName(p->name)) {
            Error(x, "`" + Shorten(p->name) + "` is not a plain name",
                  "letters, digits, '-' and '_', e.g. `server`");
          }
        }},
       {"argv",
        [&, p](const Item& x) {
          if (TemplateList(x, &p->argv, TemplateUse::kNode) &&
              (p->argv.empty() || p->argv[0].empty())) {
            Error(x, "must not be empty and must start with a program",
                  "e.g. `argv: [redis-server, --port, \"{port:client}\"]`");
          }
        }},
       {"bootstrap_args",
        [&, p](const Item& x) {
          TemplateList(x, &p->bootstrap_args, TemplateUse::kNode);
        }},
       {"env",
        [&, p](const Item& x) { TemplateEnv(x, &p->env, TemplateUse::kNode); }},
       {"cwd",
        [&, p](const Item& x) {
          if (Text(x, false, &p->cwd)) Template(x, p->cwd, TemplateUse::kNode);
        }},
       {"ready", [&, p](const Item& x) { ProcessReady(x, &p->ready); }},
       {"ready_timeout",
        [&, p](const Item& x) {
          Millis(x, 100, 3600000, &p->ready_timeout_ms,
                 "how long the process may take to become ready; default "
                 "30s");
        }},
       {"stop_signal",
        [&, p](const Item& x) {
          Enum(x, Signals(), "signal", &p->stop_signal);
        }},
       {"stop_grace",
        [&, p](const Item& x) {
          Millis(x, 0, 600000, &p->stop_grace_ms,
                 "how long to wait after stop_signal before SIGKILL; "
                 "default 5s");
        }},
       {"faults",
        [&, p](const Item& x) {
          static const std::vector<KnownName> kKinds = {
              {"pause", "", 1}, {"kill", "", 1}, {"clock", "", 1}};
          if (EnumList(x, kKinds, "fault", &p->faults)) {
            process_faults_given_.insert(p);
          }
        }},
       {"logs", [&, p](const Item& x) {
          TemplateList(x, &p->logs, TemplateUse::kNode);
        }}});
}

void Parser::Processes(const Item& it) {
  ProcessSpec& ps = spec_->target.process;
  Record(it);
  if (!it.value.IsSequence() || it.value.size() == 0) {
    Error(it, "expected a list of processes, got " + Got(it.value),
          "e.g. `processes: [{name: server, argv: [my-server, --port, "
          "\"{port:client}\"], ready: {tcp: client}}]`");
    return;
  }
  ps.processes.assign(it.value.size(), ProcessDef{});
  std::set<std::string> names;
  for (std::size_t i = 0; i < it.value.size(); ++i) {
    Item elem{it.key, it.value[i], it.path + "[" + std::to_string(i) + "]",
              it.name};
    ProcessDef& p = ps.processes[i];
    ProcessItem(elem, &p);
    if (p.name.empty())
      p.name = i == 0 ? "server" : "p" + std::to_string(i + 1);
    if (p.argv.empty() && !prov_->AnyBad({elem.path + ".argv"})) {
      Error(elem, "a process needs `argv`",
            "e.g. `argv: [my-server, --listen, \"{ip}:{port:client}\"]`");
    }
    if (!names.insert(p.name).second) {
      Error(elem, "process name `" + p.name + "` is used twice",
            "give every process its own `name`");
    }
  }
  for (std::size_t i = 0; i < ps.processes.size(); ++i) {
    ProcessDef& p = ps.processes[i];
    if (process_faults_given_.count(&p) == 0 && i == 0) {
      p.faults = {"pause", "kill", "clock"};
    }
  }
}

void Parser::Ports(const Item& it) {
  ProcessSpec& ps = spec_->target.process;
  Record(it);
  if (!it.value.IsMap() || it.value.size() == 0) {
    Error(it,
          "expected a mapping of port names to numbers, got " + Got(it.value),
          "e.g. `ports: {client: 6379, peer: 16379}`");
    return;
  }
  for (auto kv = it.value.begin(); kv != it.value.end(); ++kv) {
    const YAML::Node k = kv->first;
    const YAML::Node v = kv->second;
    const std::string name = k.IsScalar() ? k.Scalar() : "";
    Item elem{k, v, it.path + "." + name, name};
    if (!PlainName(name)) {
      Error(Item{k, k, elem.path, name},
            "`" + Shorten(name) + "` is not a plain port name",
            "letters, digits, '-' and '_', e.g. `client`");
      continue;
    }
    int port = 0;
    if (!Int(elem, 1, 65535, &port, "a TCP port")) continue;
    for (const auto& [other, _] : ps.ports) {
      if (other == name) Error(elem, "port `" + name + "` is declared twice");
    }
    ps.ports.emplace_back(name, port);
  }
}

void Parser::Lists(const Item& it) {
  ProcessSpec& ps = spec_->target.process;
  Record(it);
  if (!it.value.IsMap()) {
    Error(it, "expected a mapping of list names, got " + Got(it.value),
          "e.g. `lists: {raft: {each: \"{id}={ip}:{port:peer}\"}}`");
    return;
  }
  for (auto kv = it.value.begin(); kv != it.value.end(); ++kv) {
    const YAML::Node k = kv->first;
    const YAML::Node v = kv->second;
    PeerListSpec l;
    l.name = k.IsScalar() ? k.Scalar() : "";
    Item elem{k, v, it.path + "." + l.name, l.name};
    if (!PlainName(l.name)) {
      Error(Item{k, k, elem.path, l.name},
            "`" + Shorten(l.name) + "` is not a plain list name",
            "letters, digits, '-' and '_'");
      continue;
    }
    WalkMap(v, "target.lists.*", ValueOrigin(elem),
            {{"each",
              [&](const Item& x) {
                if (Text(x, false, &l.each)) {
                  Template(x, l.each, TemplateUse::kPeer);
                }
              }},
             {"separator", [&](const Item& x) { Text(x, true, &l.separator); }},
             {"others", [&](const Item& x) { Bool(x, &l.others); }}});
    if (l.each.empty()) {
      Error(elem, "a list needs `each`, the text for one peer",
            "e.g. `each: \"{id}={ip}:{port:peer}\"`");
      continue;
    }
    ps.lists.push_back(std::move(l));
  }
}

void Parser::Files(const Item& it) {
  ProcessSpec& ps = spec_->target.process;
  Record(it);
  if (!it.value.IsSequence()) {
    Error(it, "expected a list of {path, content}, got " + Got(it.value),
          "e.g. `files: [{path: \"{dir}/node.conf\", content: \"port "
          "{port:client}\"}]`");
    return;
  }
  for (std::size_t i = 0; i < it.value.size(); ++i) {
    Item elem{it.key, it.value[i], it.path + "[" + std::to_string(i) + "]",
              it.name};
    ProcessFileSpec f;
    bool has_content = false;
    WalkMap(it.value[i], elem.path, ValueOrigin(elem),
            {{"path",
              [&](const Item& x) {
                if (Text(x, false, &f.path)) {
                  Template(x, f.path, TemplateUse::kNode);
                }
              }},
             {"content", [&](const Item& x) {
                if (Text(x, true, &f.content)) {
                  has_content = true;
                  Template(x, f.content, TemplateUse::kNode);
                }
              }}});
    if (f.path.empty() || !has_content) {
      Error(elem, "a file needs `path` and `content`",
            "e.g. `{path: \"{dir}/node.conf\", content: \"...\"}`");
      continue;
    }
    if (!f.path.starts_with("{dir}") && !f.path.starts_with("{data}")) {
      Error(elem,
            "path `" + Shorten(f.path) + "` is outside the node's directory",
            "start it with {dir}/ or {data}/, so teardown removes it");
      continue;
    }
    ps.files.push_back(std::move(f));
  }
}

void Parser::Setup(const Item& it) {
  ProcessSpec& ps = spec_->target.process;
  Record(it);
  if (!it.value.IsSequence()) {
    Error(it, "expected a list of commands (each a list), got " + Got(it.value),
          "e.g. `setup: [[my-server, --init, \"{data}\"]]`");
    return;
  }
  for (std::size_t i = 0; i < it.value.size(); ++i) {
    Item elem{it.key, it.value[i], it.path + "[" + std::to_string(i) + "]",
              it.name};
    std::vector<std::string> argv;
    if (!TemplateList(elem, &argv, TemplateUse::kNode)) continue;
    if (argv.empty()) {
      Error(elem, "a command must not be empty");
      continue;
    }
    ps.setup.push_back(std::move(argv));
  }
}

void Parser::Status(const Item& it) {
  ProcessSpec& ps = spec_->target.process;
  Record(it);
  WalkMap(it.value, "target.status", ValueOrigin(it),
          {{"command",
            [&](const Item& x) {
              if (TemplateList(x, &ps.status, TemplateUse::kNode) &&
                  ps.status.empty()) {
                Error(x, "must not be empty");
              }
            }},
           {"client", [&](const Item& x) { Bool(x, &ps.status_client); }},
           {"timeout", [&](const Item& x) {
              Millis(x, 10, 60000, &ps.status_timeout_ms,
                     "how long one status question may take; default 1s");
            }}});
}

void Parser::Client(const Item& it) {
  ProcessClientSpec& c = spec_->target.process.client;
  Record(it);
  static const std::vector<KnownName> kProtocols = {
      {"exec", "", 1}, {"resp", "", 1}, {"etcd", "", 1}};
  static const std::vector<KnownName> kRoutes = {{"node", "", 1},
                                                 {"sentinel", "", 1}};
  WalkMap(
      it.value, "target.client", ValueOrigin(it),
      {{"protocol",
        [&](const Item& x) { Enum(x, kProtocols, "protocol", &c.protocol); }},
       {"command",
        [&](const Item& x) {
          if (TemplateList(x, &c.command, TemplateUse::kController) &&
              c.command.empty()) {
            Error(x, "must not be empty");
          }
        }},
       {"env",
        [&](const Item& x) {
          TemplateEnv(x, &c.env, TemplateUse::kController);
        }},
       {"cwd", [&](const Item& x) { Text(x, false, &c.cwd); }},
       {"start_timeout",
        [&](const Item& x) {
          Millis(x, 100, 600000, &c.start_timeout_ms,
                 "how long a client may take to answer hello; default 10s");
        }},
       {"port",
        [&](const Item& x) {
          if (Text(x, false, &c.port)) pending_ports_.push_back({x, c.port});
        }},
       {"route", [&](const Item& x) { Enum(x, kRoutes, "route", &c.route); }},
       {"sentinel",
        [&](const Item& x) {
          Record(x);
          WalkMap(
              x.value, "target.client.sentinel", ValueOrigin(x),
              {{"port",
                [&](const Item& y) {
                  if (Text(y, false, &c.sentinel_port)) {
                    pending_ports_.push_back({y, c.sentinel_port});
                  }
                }},
               {"master", [&](const Item& y) { Text(y, false, &c.master); }}});
        }},
       {"commands", [&](const Item& x) {
          Record(x);
          static const std::vector<std::string> kOps = {
              "read", "write", "cas", "acquire", "renew", "release"};
          std::vector<FieldDef> ops;
          for (const std::string& op : kOps) {
            ops.push_back({op, [&, op](const Item& y) {
                             std::vector<std::string> argv;
                             if (TemplateList(y, &argv, TemplateUse::kResp)) {
                               c.commands[op] = argv;
                             }
                           }});
          }
          WalkMap(x.value, "target.client.commands", ValueOrigin(x), ops);
        }}});
}

std::vector<FieldDef> Parser::ProcessFields() {
  ProcessSpec& ps = spec_->target.process;
  static const std::vector<KnownName> kStart = {{"parallel", "", 1},
                                                {"sequential", "", 1}};
  return {
      {"system", [&](const Item& x) { Text(x, false, &ps.system); }},
      {"config_dir",
       [&](const Item& x) {
         if (Text(x, false, &ps.config_dir) && ps.config_dir[0] != '/') {
           Error(x, "must be an absolute path",
                 "leave it out: it defaults to the config file's directory");
         }
       }},
      {"version", [&](const Item& x) { TextList(x, &ps.version); }},
      {"ports", [&](const Item& x) { Ports(x); }},
      {"lists", [&](const Item& x) { Lists(x); }},
      {"files", [&](const Item& x) { Files(x); }},
      {"setup", [&](const Item& x) { Setup(x); }},
      {"start",
       [&](const Item& x) { Enum(x, kStart, "start order", &ps.start); }},
      {"processes", [&](const Item& x) { Processes(x); }},
      {"status", [&](const Item& x) { Status(x); }},
      {"client", [&](const Item& x) { Client(x); }},
  };
}

// After the section: every template and port reference against what the
// section declared, and what a process target needs at all.
void Parser::FinishProcess(const Item& target) {
  ProcessSpec& ps = spec_->target.process;
  std::vector<std::string> ports, lists;
  for (const auto& [name, _] : ps.ports) ports.push_back(name);
  for (const auto& l : ps.lists) lists.push_back(l.name);
  for (const PendingTemplate& t : pending_templates_) {
    TemplateNames names;
    names.ports = ports;
    names.lists = lists;
    if (t.use == TemplateUse::kPeer) {
      names.node_files = false;
      names.peers = false;
    }
    if (t.use == TemplateUse::kController) names.node_files = false;
    if (t.use == TemplateUse::kResp) {
      names.node_files = false;
      names.extra = {"key", "value", "old", "new", "ttl", "token", "owner"};
    }
    if (auto e = CheckTemplate(t.text, names)) {
      prov_->bad.insert(t.item.path);
      diag_->Add(TemplateOrigin(t.item, e->offset),
                 t.item.path + ": " + e->message, e->hint);
    }
  }
  for (const PendingPort& p : pending_ports_) {
    bool found = false;
    for (const auto& [name, number] : ps.ports) {
      found = found || name == p.name || std::to_string(number) == p.name;
    }
    if (!found) {
      Error(p.item,
            "port `" + Shorten(p.name) +
                "` is not one of target.ports, so "
                "this can never connect",
            ps.ports.empty()
                ? "declare the node's ports, e.g. `ports: {client: 6379}`"
                : "use one of the declared port names");
    }
  }
  if (ps.processes.empty() && !prov_->AnyBad({"target.processes"})) {
    Error(target, "target process needs `processes`",
          "list at least one, e.g. `processes: [{name: server, argv: "
          "[my-server, \"--port={port:client}\"], ready: {tcp: client}}]`");
  }
  ProcessClientSpec& c = ps.client;
  if (c.protocol == "exec" && c.command.empty() &&
      !prov_->AnyBad({"target.client", "target.client.command"})) {
    Error(target, "target process needs `client` (how workers talk to it)",
          "e.g. `client: {protocol: exec, command: [python3, client.py]}` "
          "(docs/exec-protocol.md), or `{protocol: resp, port: client}`");
  }
  if ((c.protocol == "resp" || c.protocol == "etcd") && c.port.empty() &&
      !prov_->AnyBad({"target.client", "target.client.port"})) {
    Error(target, "a " + c.protocol + " client needs `client.port`",
          "name the port it connects to, e.g. `port: client`");
  }
  if (c.route == "sentinel" && c.sentinel_port.empty() &&
      !prov_->AnyBad({"target.client.route"})) {
    Error(target, "client.route sentinel needs `client.sentinel.port`",
          "e.g. `sentinel: {port: sentinel, master: mymaster}`");
  }
}

}  // namespace faultline::harness::config_internal
