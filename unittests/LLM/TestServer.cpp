//===- TestServer.cpp - The scripted LLM server, from C++ -----------------===//

#include "TestServer.h"

#include "optiml/LLM/LLMError.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <csignal>
#include <thread>

using namespace llvm;

namespace optiml {
namespace llm {

const char *const FakeKey = "sk-test-0123456789abcdefSECRET";

Expected<std::unique_ptr<ScriptedServer>> ScriptedServer::start() {
  auto S = std::make_unique<ScriptedServer>();
  SmallString<128> PortFile;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("llm-server", "port", PortFile))
    return errorCodeToError(EC);
  sys::fs::remove(PortFile);
  S->PortFile = std::string(PortFile);
  std::string Python = OPTIML_TEST_PYTHON;
  std::string Script = OPTIML_TEST_SERVER;
  StringRef Args[] = {Python, Script, "--port-file", S->PortFile};
  std::string ErrMsg;
  S->Process = sys::ExecuteNoWait(Python, Args, std::nullopt, {}, 0, &ErrMsg);
  if (S->Process.Pid == sys::ProcessInfo::InvalidPid)
    return createStringError("cannot start the test server: " + ErrMsg);
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < Deadline) {
    if (auto Buf = MemoryBuffer::getFile(S->PortFile)) {
      unsigned Port;
      if (!(*Buf)->getBuffer().trim().getAsInteger(10, Port)) {
        S->Port = Port;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!S->Port)
    return createStringError("the test server did not start");
  S->Control = createCurlTransport();
  return std::move(S);
}

ScriptedServer::~ScriptedServer() {
  if (Process.Pid != sys::ProcessInfo::InvalidPid) {
    ::kill(Process.Pid, SIGTERM);
    sys::Wait(Process, 5u);
  }
  if (!PortFile.empty())
    sys::fs::remove(PortFile);
}

std::string ScriptedServer::baseURL(Provider P) const {
  std::string Host = "http://127.0.0.1:" + std::to_string(Port);
  return P == Provider::Anthropic ? Host : Host + "/v1";
}

static Expected<HttpResponse> controlPost(HttpTransport &T, unsigned Port,
                                          StringRef Path, StringRef Body) {
  HttpRequest R;
  R.Url = "http://127.0.0.1:" + std::to_string(Port) + Path.str();
  R.Headers = {{"Content-Type", "application/json"}};
  R.Body = Body.str();
  R.Timeout = std::chrono::seconds(10);
  R.MaxResponseBytes = 64u << 20;
  return T.post(R);
}

Error ScriptedServer::script(StringRef Script) {
  Expected<HttpResponse> R =
      controlPost(*Control, Port, "/_control/script", Script);
  if (!R)
    return R.takeError();
  if (R->Status != 200)
    return createStringError("script rejected: " + R->Body);
  return Error::success();
}

Expected<nlohmann::json> ScriptedServer::stats() {
  Expected<HttpResponse> R =
      controlPost(*Control, Port, "/_control/stats", "{}");
  if (!R)
    return R.takeError();
  nlohmann::json J = nlohmann::json::parse(R->Body, nullptr,
                                           /*allow_exceptions=*/false);
  if (!J.is_object())
    return createStringError("the server's statistics are not a JSON "
                             "object: " +
                             R->Body);
  return J;
}

unsigned ScriptedServer::count() {
  Expected<nlohmann::json> S = stats();
  if (!S) {
    ADD_FAILURE() << toString(S.takeError());
    return 0;
  }
  auto It = S->find("count");
  return It != S->end() && It->is_number_unsigned() ? It->get<unsigned>() : 0;
}

ScriptedServer *ServerTest::Server = nullptr;

void ServerTest::SetUpTestSuite() {
  if (Server)
    return;
  Expected<std::unique_ptr<ScriptedServer>> S = ScriptedServer::start();
  if (!S) {
    ADD_FAILURE() << toString(S.takeError());
    return;
  }
  Server = S->release();
}

void ServerTest::TearDownTestSuite() {
  delete Server;
  Server = nullptr;
}

void ServerTest::SetUp() {
  ASSERT_NE(Server, nullptr) << "the scripted server is not running";
  Transport = std::shared_ptr<HttpTransport>(createCurlTransport());
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("llm-test", Dir));
  TempDir = std::string(Dir);
}

void ServerTest::TearDown() {
  if (!TempDir.empty())
    sys::fs::remove_directories(TempDir);
}

LLMConfig ServerTest::config(Provider P) const {
  LLMConfig C;
  C.Prov = P;
  C.Model = P == Provider::Anthropic ? "claude-test" : "gpt-test";
  C.BaseURL = Server->baseURL(P);
  C.APIKey = FakeKey;
  C.Timeout = std::chrono::milliseconds(5000);
  C.ConnectTimeout = std::chrono::milliseconds(2000);
  C.MaxAttempts = 3;
  C.InitialBackoff = std::chrono::milliseconds(20);
  C.MaxBackoff = std::chrono::milliseconds(100);
  C.MaxRetryAfter = std::chrono::milliseconds(5000);
  C.NoCache = true;
  return C;
}

void ServerTest::script(StringRef Script) {
  if (Error E = Server->script(Script))
    FAIL() << toString(std::move(E));
}

unsigned ServerTest::count() { return Server->count(); }

} // namespace llm
} // namespace optiml
