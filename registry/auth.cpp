// Credential lookup and challenge parsing; the rules are in auth.hpp.
#include "registry/auth.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

extern char** environ;

namespace ccpack::registry {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxConfigBytes = 1u << 20;
constexpr std::size_t kMaxHelperOutput = 64u << 10;

std::optional<std::string> read_small_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::nullopt;
    throw_errno("cannot open auth file " + quoted_path(path));
  }
  std::string text(kMaxConfigBytes + 1, '\0');
  std::size_t got = pread_full(fd.get(), text.data(), text.size(), 0, "auth file " + quoted_path(path));
  if (got > kMaxConfigBytes) throw Error("auth file " + quoted_path(path) + " is larger than 1 MiB");
  text.resize(got);
  return text;
}

// "https://index.docker.io/v1/" -> "index.docker.io"; "localhost:5000" stays.
std::string normalise_key(std::string_view key) {
  if (auto p = key.find("://"); p != std::string_view::npos) key.remove_prefix(p + 3);
  key = key.substr(0, key.find('/'));
  return std::string(key);
}

bool same_registry(std::string_view key, std::string_view registry) {
  std::string k = normalise_key(key);
  auto hub = [](std::string_view h) { return h == "docker.io" || h == "index.docker.io" || h == "registry-1.docker.io"; };
  return k == registry || (hub(k) && hub(registry));
}

// Reads `fd` to its end, or until more than kMaxHelperOutput bytes came (the caller refuses that much).
std::string read_helper_output(int fd) {
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxHelperOutput) break;
  }
  return text;
}

// Runs `program get` with `server` on stdin, no shell, and returns what it printed; nullopt when it failed or
// printed more than kMaxHelperOutput bytes.
std::optional<std::string> helper_answer(std::string program, const std::string& server) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw_errno("cannot run " + program);
  pid_t pid = ::fork();
  if (pid < 0) throw_errno("cannot run " + program);
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);  // a helper's diagnostics could hold secrets
    char* argv[] = {program.data(), const_cast<char*>("get"), nullptr};
    ::execvp(program.c_str(), argv);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  UniqueFd to(in[1]);
  UniqueFd from(out[0]);
  // SIGPIPE is ignored process-wide (cli/main.cpp), so a helper that exits early gives EPIPE here.
  (void)::write(to.get(), server.data(), server.size());
  to.reset();
  std::string text = read_helper_output(from.get());
  from.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.size() > kMaxHelperOutput) return std::nullopt;
  return text;
}

// A helper's answer as credentials: {"Username", "Secret"}, a Username of "<token>" making Secret an identity token.
Credentials helper_credentials(const std::string& text, const std::string& program, std::string_view registry) {
  json doc = json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("Secret") || !doc["Secret"].is_string()) {
    throw Error(program + " answered something other than credentials for " + std::string(registry));
  }
  Credentials c;
  c.source = program;
  std::string user = doc.value("Username", "");
  if (user == "<token>") {
    c.identity_token = doc["Secret"].get<std::string>();
  } else {
    c.username = user;
    c.password = doc["Secret"].get<std::string>();
  }
  return c;
}

// Runs `docker-credential-<name> get` with the server on stdin; bounded output, no shell.
std::optional<Credentials> run_helper(const std::string& name, std::string_view registry) {
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') {
      throw Error("credential helper name for " + std::string(registry) + " has invalid characters");
    }
  }
  std::string program = "docker-credential-" + name;
  std::optional<std::string> text = helper_answer(program, std::string(registry));
  if (!text) return std::nullopt;
  return helper_credentials(*text, program, registry);
}

std::optional<Credentials> lookup_file(const std::string& path, std::string_view registry, bool must_exist) {
  std::optional<std::string> text = read_small_file(path);
  if (!text) {
    if (must_exist) throw Error("auth file " + quoted_path(path) + " does not exist");
    return std::nullopt;
  }
  std::string helper;
  std::optional<Credentials> c = credentials_in_config(*text, registry, path, &helper);
  if (!c && !helper.empty()) c = run_helper(helper, registry);
  return c;
}

}  // namespace

std::optional<Credentials> credentials_in_config(std::string_view text, std::string_view registry, const std::string& file,
                                                 std::string* helper) {
  auto malformed = [&](const std::string& why) { return Error("auth file " + quoted_path(file) + ": " + why); };
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw malformed("is not a JSON object");
  auto auths = doc.find("auths");
  if (auths != doc.end() && auths->is_object()) {
    for (const auto& [key, entry] : auths->items()) {
      if (!same_registry(key, registry)) continue;
      if (!entry.is_object()) throw malformed("the entry for " + std::string(registry) + " is not an object");
      Credentials c;
      c.source = file;
      if (auto a = entry.find("auth"); a != entry.end() && a->is_string() && !a->get_ref<const std::string&>().empty()) {
        std::optional<std::string> pair = base64_decode(a->get<std::string>());
        std::size_t colon = pair ? pair->find(':') : std::string::npos;
        if (colon == std::string::npos)
          throw malformed("the 'auth' of " + std::string(registry) + " is not base64 of user:password");
        c.username = pair->substr(0, colon);
        c.password = pair->substr(colon + 1);
      } else {
        c.username = entry.value("username", "");
        c.password = entry.value("password", "");
      }
      c.identity_token = entry.value("identitytoken", "");
      if (!c.username.empty() || !c.identity_token.empty()) return c;
    }
  }
  if (helper != nullptr) {
    auto helpers = doc.find("credHelpers");
    if (helpers != doc.end() && helpers->is_object()) {
      for (const auto& [key, name] : helpers->items()) {
        if (same_registry(key, registry) && name.is_string()) *helper = name.get<std::string>();
      }
    }
    if (helper->empty() && doc.contains("credsStore") && doc["credsStore"].is_string())
      *helper = doc["credsStore"].get<std::string>();
  }
  return std::nullopt;
}

std::optional<Credentials> find_credentials(std::string_view registry, const std::string& authfile) {
  if (!authfile.empty()) return lookup_file(authfile, registry, true);
  if (const char* f = std::getenv("REGISTRY_AUTH_FILE"); f != nullptr && *f != '\0') return lookup_file(f, registry, true);
  std::vector<std::string> candidates;
  if (const char* d = std::getenv("DOCKER_CONFIG"); d != nullptr && *d != '\0')
    candidates.push_back(std::string(d) + "/config.json");
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    candidates.push_back(std::string(h) + "/.docker/config.json");
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x != nullptr && *x != '\0')
    candidates.push_back(std::string(x) + "/containers/auth.json");
  for (const std::string& path : candidates) {
    if (std::optional<Credentials> c = lookup_file(path, registry, false)) return c;
  }
  return std::nullopt;
}

std::optional<Challenge> parse_challenge(std::string_view header) {
  if (header.size() > 4096) return std::nullopt;
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < header.size() && (header[i] == ' ' || header[i] == '\t')) ++i;
  };
  auto token = [&] {
    std::size_t start = i;
    while (i < header.size() && header[i] != ' ' && header[i] != '=' && header[i] != ',' && header[i] != '\t') ++i;
    return std::string(header.substr(start, i - start));
  };
  skip_space();
  Challenge c;
  c.scheme = token();
  for (char& ch : c.scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (c.scheme.empty()) return std::nullopt;
  for (int params = 0; params < 16; ++params) {
    skip_space();
    while (i < header.size() && header[i] == ',') ++i;
    skip_space();
    if (i >= header.size()) break;
    std::string key = token();
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (i >= header.size() || header[i] != '=') break;  // the start of another challenge: keep only the first
    ++i;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      for (++i; i < header.size() && header[i] != '"'; ++i) {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value.push_back(header[i]);
      }
      if (i >= header.size()) return std::nullopt;  // unterminated quote
      ++i;
    } else {
      value = token();
    }
    if (key == "realm") c.realm = value;
    if (key == "service") c.service = value;
    if (key == "scope") c.scope = value;
  }
  return c;
}

}  // namespace ccpack::registry
