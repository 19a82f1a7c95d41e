// xonnx tokenize: a tokenizer.json (or a model folder) applied to text, for humans (ids with
// their pieces) and for scripts (--jsonl: one JSON line of ids and decoded text per input string).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sdk/cli/commands.h"
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
};

// Printable form of a token's bytes: C-style escapes for control and ill-formed bytes.
std::string escaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '"' || c == '\\') out += std::string("\\") + static_cast<char>(c);
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
  text->excludes(file);
  return [opts, cmd]() {
    if (opts->jsonl != !opts->file.empty()) {
      std::fprintf(stderr, "error: --file and --jsonl go together\n%s", cmd->help().c_str());
      return 2;
    }
    return run_tokenize(*opts);
  };
}

}  // namespace cli
}  // namespace xonnx
