//===- TestServer.h - The scripted LLM server, from C++ -------------------===//
//
// Starts test/Inputs/llm/server.py on a free loopback port and scripts it.
// One server per test suite; each test replaces the script (which also
// resets the server's counters).
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_UNITTESTS_LLM_TESTSERVER_H
#define OPTIML_UNITTESTS_LLM_TESTSERVER_H

#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMConfig.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Program.h"

#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace optiml {
namespace llm {

class ScriptedServer {
public:
  static llvm::Expected<std::unique_ptr<ScriptedServer>> start();
  ~ScriptedServer();

  unsigned port() const { return Port; }
  /// The base URL as a user would configure it for each provider.
  std::string baseURL(Provider P) const;

  /// Replaces the script; Script is the JSON object server.py documents.
  llvm::Error script(llvm::StringRef Script);
  /// The server's statistics, a JSON object: count, max_in_flight,
  /// invalid, requests.
  llvm::Expected<nlohmann::json> stats();
  /// Requests the server has seen since the last script.
  unsigned count();

private:
  llvm::sys::ProcessInfo Process;
  std::string PortFile;
  unsigned Port = 0;
  std::unique_ptr<HttpTransport> Control;
};

/// A fixture with a server shared by the suite's tests.
class ServerTest : public ::testing::Test {
protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;
  void TearDown() override;

  /// A config pointing at the server, with a fake key, short timeouts and
  /// backoffs, and the cache off.
  LLMConfig config(Provider P) const;
  void script(llvm::StringRef Script);
  unsigned count();

  static ScriptedServer *Server;
  std::shared_ptr<HttpTransport> Transport;
  std::string TempDir;
};

/// The fake key used by every test; redaction tests look for it.
extern const char *const FakeKey;

} // namespace llm
} // namespace optiml

#endif // OPTIML_UNITTESTS_LLM_TESTSERVER_H
