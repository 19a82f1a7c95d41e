// xonnx tokenize: a tokenizer.json (or a model folder) applied to text, for humans (ids with
// their pieces) and for scripts (--jsonl: one JSON line of ids and decoded text per input string).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sdk/cli/commands.h"
#include "sdk/genai/chat_template.h"
#include "sdk/genai/tokenizer.h"

namespace xonnx {
namespace cli {
namespace {

struct TokenizeOptions {
  std::string path;
  std::string text;
  std::string file;
  bool jsonl = false;
  bool no_special = false;
  bool skip_special_on_decode = false;
  std::string chat;           // conversation file
  std::string template_file;  // template to use instead of tokenizer_config.json's
  bool no_generation_prompt = false;
};

std::string read_text(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A conversation: a JSON array of messages, or {"messages": [...], "tools": [...], other
// template variables}. Renders it, or gives the error.
Result<std::string> render_chat(const genai::TokenizerConfig& config, const nlohmann::ordered_json& conversation,
                                const TokenizeOptions& o, const std::string& template_source) {
  genai::ChatOptions options;
  options.add_generation_prompt = !o.no_generation_prompt;
  options.template_source = template_source;
  nlohmann::ordered_json messages = conversation;
  if (conversation.is_object()) {
    messages = conversation.value("messages", nlohmann::ordered_json::array());
    for (auto it = conversation.begin(); it != conversation.end(); ++it) {
      if (it.key() == "tools")
        options.tools = *it;
      else if (it.key() == "add_generation_prompt" && it->is_boolean())
        options.add_generation_prompt = it->get<bool>();
      else if (it.key() != "messages")
        options.extra[it.key()] = *it;
    }
  }
  return genai::apply_chat_template(config, messages, options);
}

// Renders chat templates; only tokenizer_config.json is read.
int run_chat(const TokenizeOptions& o) {
  auto config = genai::Tokenizer::load_config(o.path);
  if (!config.is_ok()) {
    std::fprintf(stderr, "error: %s\n", config.status().to_string().c_str());
    return 1;
  }
  const genai::TokenizerConfig& cfg = config.value();
  bool ok = true;
  std::string template_source;
  if (!o.template_file.empty()) {
    template_source = read_text(o.template_file, ok);
    if (!ok) {
      std::fprintf(stderr, "error: cannot read %s\n", o.template_file.c_str());
      return 1;
    }
  }
  const std::string text = read_text(o.chat, ok);
  if (!ok) {
    std::fprintf(stderr, "error: cannot read %s\n", o.chat.c_str());
    return 1;
  }
  if (!o.jsonl) {
    const auto conversation = nlohmann::ordered_json::parse(text, nullptr, false);
    if (conversation.is_discarded()) {
      std::fprintf(stderr, "error: %s is not valid JSON\n", o.chat.c_str());
      return 1;
    }
    auto prompt = render_chat(cfg, conversation, o, template_source);
    if (!prompt.is_ok()) {
      std::fprintf(stderr, "error: %s\n", prompt.status().to_string().c_str());
      return 1;
    }
    std::fwrite(prompt.value().data(), 1, prompt.value().size(), stdout);
    return 0;
  }
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    const auto conversation = nlohmann::ordered_json::parse(line, nullptr, false);
    nlohmann::json out;
    if (conversation.is_discarded()) {
      out["error"] = "line " + std::to_string(number) + " is not valid JSON";
    } else {
      auto prompt = render_chat(cfg, conversation, o, template_source);
      if (prompt.is_ok())
        out["prompt"] = prompt.value();
      else
        out["error"] = prompt.status().message();
    }
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
  return 0;
}

// Printable form of a token's bytes: C-style escapes for control and ill-formed bytes.
std::string escaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int run_tokenize(const TokenizeOptions& o) {
  if (!o.chat.empty()) return run_chat(o);
  auto loaded = genai::Tokenizer::load(o.path);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "error: %s\n", loaded.status().to_string().c_str());
    return 1;
  }
  const genai::Tokenizer& tok = *loaded.value();
  if (o.jsonl) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "error: cannot open %s\n", o.file.c_str());
      return 1;
    }
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
      if (line.empty()) continue;
      const nlohmann::json text = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!text.is_string()) {
        std::fprintf(stderr, "error: %s:%zu: expected a JSON string\n", o.file.c_str(), number);
        return 1;
      }
      const std::vector<int32_t> ids = tok.encode(text.get_ref<const std::string&>(), !o.no_special);
      nlohmann::json j;
      j["ids"] = ids;
      j["decoded"] = tok.decode(ids, o.skip_special_on_decode);
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    return 0;
  }
  const std::vector<int32_t> ids = tok.encode(o.text, !o.no_special);
  std::printf("%zu tokens\n", ids.size());
  for (int32_t id : ids) {
    std::printf("%8d  %-24s \"%s\"\n", id, tok.id_to_token(id).c_str(), escaped(tok.token_bytes(id)).c_str());
  }
  std::printf("decoded: \"%s\"\n", escaped(tok.decode(ids, o.skip_special_on_decode)).c_str());
  return 0;
}

}  // namespace

Runner add_tokenize_command(CLI::App& app) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Encode text with a tokenizer.json (or a model folder holding one)");
  cmd->add_option("path", opts->path, "tokenizer.json, or a folder with tokenizer.json (+ tokenizer_config.json)")
      ->required();
  auto* text = cmd->add_option("--text", opts->text, "text to encode");
  auto* file = cmd->add_option("--file", opts->file, "a file of JSON strings, one per line, to encode (with --jsonl)");
  cmd->add_flag("--jsonl", opts->jsonl, "print one JSON line per input string: {\"ids\": [...], \"decoded\": \"...\"}");
  cmd->add_flag("--no-special", opts->no_special, "do not add the post-processor's special tokens (bos/eos)");
  cmd->add_flag("--skip-special", opts->skip_special_on_decode, "leave special tokens out of the decoded text");
  auto* chat = cmd->add_option("--chat", opts->chat,
                               "render the chat template for a conversation file: a JSON array of messages or "
                               "{\"messages\": [...], \"tools\": [...], ...}; with --jsonl, one conversation per line");
  cmd->add_option("--template", opts->template_file, "a chat template file to use instead of tokenizer_config.json's");
  cmd->add_flag("--no-generation-prompt", opts->no_generation_prompt, "render without add_generation_prompt");
  text->excludes(file);
  chat->excludes(text)->excludes(file);
  return [opts, cmd]() {
    if (opts->chat.empty() && opts->jsonl != !opts->file.empty()) {
      std::fprintf(stderr, "error: --file and --jsonl go together\n%s", cmd->help().c_str());
      return 2;
    }
    return run_tokenize(*opts);
  };
}

}  // namespace cli
}  // namespace xonnx
