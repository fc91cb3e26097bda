#include "cli/generate.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace faultline::cli {
namespace {

// One option or positional as the generated documents need it.
struct OptDoc {
  std::vector<std::string> names;  // "-q", "--quiet"; empty for positionals
  std::string positional;          // name of a positional, else ""
  bool takes_value = false;
  std::string value_name;  // "TEXT", "INT", ...
  std::vector<std::string> choices;
  std::string description;
};

struct CmdDoc {
  std::string name;
  std::string description;
  std::string footer;
  std::vector<OptDoc> options;
};

std::vector<OptDoc> Options(const CLI::App& app) {
  std::vector<OptDoc> out;
  for (const CLI::Option* o :
       app.get_options([](const CLI::Option*) { return true; })) {
    if (o->get_group().empty()) continue;  // hidden
    OptDoc d;
    for (const auto& s : o->get_snames()) d.names.push_back("-" + s);
    for (const auto& l : o->get_lnames()) d.names.push_back("--" + l);
    if (d.names.empty()) d.positional = o->get_name();
    d.takes_value = o->get_expected_max() > 0;  // flags expect none
    std::string type = o->get_type_name();
    d.value_name = type.substr(0, type.find(':'));
    d.choices = OptionChoices(*o);
    d.description = o->get_description();
    out.push_back(d);
  }
  return out;
}

std::vector<CmdDoc> Commands(const CLI::App& app) {
  std::vector<CmdDoc> out;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; })) {
    CmdDoc c;
    c.name = sub->get_name();
    c.description = sub->get_description();
    c.footer = sub->get_footer();
    c.options = Options(*sub);
    out.push_back(c);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// --- man page --------------------------------------------------------------

// Text for roff: backslashes and minus signs escaped, and no line starting
// with a control character.
std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char ch : text) {
    if (line_start && (ch == '.' || ch == '\'')) out += "\\&";
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
    line_start = ch == '\n';
  }
  return out;
}

void ManOptions(std::string& out, const std::vector<OptDoc>& options) {
  for (const OptDoc& o : options) {
    out += ".TP\n";
    if (!o.positional.empty()) {
      out += "\\fI" + Roff(o.positional) + "\\fR\n";
    } else {
      std::vector<std::string> names;
      for (const auto& n : o.names) names.push_back("\\fB" + Roff(n) + "\\fR");
      out += Join(names, ", ");
      if (o.takes_value) {
        out += " \\fI" +
               Roff(o.choices.empty() ? o.value_name
                                      : "{" + Join(o.choices, ",") + "}") +
               "\\fR";
      }
      out += "\n";
    }
    out += Roff(o.description) + "\n";
  }
}

// --- completion ------------------------------------------------------------

// Words an option's completion offers: the names of `options` and then of
// `more`, each once.
std::string OptionWords(const std::vector<OptDoc>& options,
                        const std::vector<OptDoc>& more = {}) {
  std::vector<std::string> words;
  for (const auto* list : {&options, &more}) {
    for (const OptDoc& o : *list) {
      for (const auto& n : o.names) {
        if (std::find(words.begin(), words.end(), n) == words.end())
          words.push_back(n);
      }
    }
  }
  return Join(words, " ");
}

// A description safe inside a zsh '...[...]' spec.
std::string ZshText(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\'' || ch == '[' || ch == ']' || ch == '\\' || ch == '`' ||
        ch == '$') {
      continue;
    }
    out += ch == ':' ? ';' : ch == '\n' ? ' ' : ch;
  }
  return out;
}

void ZshSpecs(std::string& out, const std::vector<OptDoc>& options,
              const std::string& indent) {
  for (const OptDoc& o : options) {
    const std::string what =
        o.choices.empty() ? "_files" : "(" + Join(o.choices, " ") + ")";
    if (!o.positional.empty()) {
      out += indent + "'*:" + ZshText(o.positional) + ":" + what + "' \\\n";
      continue;
    }
    const std::string action = o.takes_value ? ":value:" + what : "";
    std::string excl =
        o.names.size() > 1 ? "'(" + Join(o.names, " ") + ")'" : "";
    for (const auto& n : o.names) {
      out += indent + excl + "'" + n + "[" + ZshText(o.description) + "]" +
             action + "' \\\n";
    }
  }
}

// `options` without those sharing a name with one of `taken`.
std::vector<OptDoc> Without(const std::vector<OptDoc>& options,
                            const std::vector<OptDoc>& taken) {
  std::vector<OptDoc> out;
  for (const OptDoc& o : options) {
    bool clash = false;
    for (const OptDoc& t : taken) {
      for (const auto& n : o.names) {
        clash = clash ||
                std::find(t.names.begin(), t.names.end(), n) != t.names.end();
      }
    }
    if (!clash) out.push_back(o);
  }
  return out;
}

}  // namespace

std::vector<std::string> OptionChoices(const CLI::Option& option) {
  std::vector<std::string> out;
  std::string type = option.get_type_name();
  auto open = type.find(":{");
  if (open == std::string::npos) return out;
  auto close = type.find('}', open);
  if (close == std::string::npos) return out;
  std::stringstream list(type.substr(open + 2, close - open - 2));
  std::string item;
  while (std::getline(list, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string ManPage(const CLI::App& app, const std::string& version) {
  std::string out;
  out +=
      ".\\\" faultline(1), generated by `faultline --generate man` from "
      "the command tree.\n";
  out += ".TH FAULTLINE 1 \"\" \"faultline " + Roff(version) +
         "\" \"User Commands\"\n";
  out +=
      ".SH NAME\nfaultline \\- Jepsen\\-style fault injection and "
      "history checking\n";
  out +=
      ".SH SYNOPSIS\n.B faultline\n[\\fIGLOBAL FLAGS\\fR] "
      "\\fICOMMAND\\fR [\\fIARGS\\fR]\n.br\n.B faultline\n"
      "\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR\n";
  out += ".SH DESCRIPTION\n" + Roff(app.get_description()) + "\n";
  out += ".PP\nWithout a command, faultline prints its help and exits 0.\n";
  out += ".SH GLOBAL FLAGS\nAccepted before or after the command.\n";
  ManOptions(out, Options(app));
  out += ".SH COMMANDS\n";
  for (const CmdDoc& c : Commands(app)) {
    out += ".SS \"faultline " + Roff(c.name) + "\"\n" + Roff(c.description) +
           ".\n";
    ManOptions(out, c.options);
    if (!c.footer.empty()) {
      out += ".PP\n.nf\n" + Roff(c.footer) + "\n.fi\n";
    }
  }
  out +=
      ".SH EXIT STATUS\n.TP\n0\nvalid (or the expected verdict; help, "
      "list, validate of good configs)\n.TP\n1\ninvalid\n.TP\n2\n"
      "unknown: nothing checked, or a time or memory bound hit\n.TP\n"
      "130, 143\ninterrupted by SIGINT or SIGTERM, whatever the verdict\n"
      ".TP\n254\nbad usage, config or input, or a run refused by its "
      "environment; nothing was started\n.TP\n255\ninternal error, "
      "including a cluster that never became healthy\n";
  out +=
      ".SH ENVIRONMENT\n.TP\nNO_COLOR\nWhen set and not empty, no ANSI "
      "colour (\\fB\\-\\-color always\\fR still colours).\n";
  out +=
      ".SH FILES\n.TP\nstore/\\fITEST\\fR/\\fITIMESTAMP\\fR/\nA run's "
      "config.yaml, history.jsonl, ledger.jsonl, faultline.log, "
      "results.json, junit.xml, report.html and node logs.\n";
  return out;
}

std::string BashCompletion(const CLI::App& app) {
  const std::vector<CmdDoc> cmds = Commands(app);
  const std::vector<OptDoc> global = Options(app);
  std::vector<std::string> names;
  for (const CmdDoc& c : cmds) names.push_back(c.name);
  std::string out;
  out +=
      "# bash completion for faultline, generated by `faultline --generate "
      "bash`\n# from its command tree. Source it, or install it as\n"
      "# /usr/share/bash-completion/completions/faultline.\n";
  out += "_faultline() {\n";
  out += "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n";
  out += "  local prev=\"\"\n";
  out +=
      "  [ \"$COMP_CWORD\" -gt 0 ] && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n";
  out += "  local cmd=\"\" i\n";
  out += "  for ((i = 1; i < COMP_CWORD; i++)); do\n";
  out += "    case \"${COMP_WORDS[i]}\" in\n";
  out += "      " + Join(names, "|") + ") cmd=\"${COMP_WORDS[i]}\"; break ;;\n";
  out += "    esac\n  done\n";
  // Values of options: their choices, else file names.
  out += "  case \"$cmd:$prev\" in\n";
  auto value_cases = [&out](const std::string& cmd,
                            const std::vector<OptDoc>& options) {
    for (const OptDoc& o : options) {
      if (!o.takes_value || o.names.empty()) continue;
      std::vector<std::string> pats;
      for (const auto& n : o.names) pats.push_back(cmd + ":" + n);
      out += "    " + Join(pats, "|") + ")\n";
      if (o.choices.empty()) {
        out += "      COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
      } else {
        out += "      COMPREPLY=($(compgen -W \"" + Join(o.choices, " ") +
               "\" -- \"$cur\")); return ;;\n";
      }
    }
  };
  for (const CmdDoc& c : cmds) value_cases(c.name, c.options);
  value_cases("*", global);
  out += "  esac\n";
  out += "  local opts=\"" + OptionWords(global) + "\"\n";
  out += "  case \"$cmd\" in\n";
  out += "    \"\")\n      if [[ \"$cur\" == -* ]]; then\n";
  out += "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n";
  out += "      else\n        COMPREPLY=($(compgen -W \"" + Join(names, " ") +
         "\" -- \"$cur\"))\n      fi\n      return ;;\n";
  for (const CmdDoc& c : cmds) {
    out += "    " + c.name + ") opts=\"" + OptionWords(c.options, global) +
           "\" ;;\n";
  }
  out += "  esac\n";
  out += "  if [[ \"$cur\" == -* ]]; then\n";
  out += "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n";
  out += "  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n";
  out += "}\ncomplete -o filenames -F _faultline faultline\n";
  return out;
}

std::string ZshCompletion(const CLI::App& app) {
  const std::vector<CmdDoc> cmds = Commands(app);
  const std::vector<OptDoc> global = Options(app);
  std::string out;
  out +=
      "#compdef faultline\n# zsh completion for faultline, generated by "
      "`faultline --generate zsh`\n# from its command tree. Install it as "
      "_faultline in a directory of $fpath.\n";
  out += "_faultline() {\n  local curcontext=\"$curcontext\" state line\n";
  out += "  local -a commands\n  commands=(\n";
  for (const CmdDoc& c : cmds) {
    out += "    '" + c.name + ":" + ZshText(c.description) + "'\n";
  }
  out += "  )\n";
  out += "  _arguments -C \\\n";
  ZshSpecs(out, global, "    ");
  out += "    '1: :->command' \\\n    '*:: :->args'\n";
  out += "  case $state in\n";
  out += "    command) _describe -t commands 'faultline command' commands ;;\n";
  out += "    args)\n      case $line[1] in\n";
  for (const CmdDoc& c : cmds) {
    out += "        " + c.name + ")\n          _arguments \\\n";
    ZshSpecs(out, c.options, "            ");
    ZshSpecs(out, Without(global, c.options), "            ");
    out += "            ;;\n";
  }
  out += "      esac ;;\n  esac\n}\n_faultline \"$@\"\n";
  return out;
}

}  // namespace faultline::cli
