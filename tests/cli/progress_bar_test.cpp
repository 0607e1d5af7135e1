// The planner's progress bar redraws one line with '\r': only on a terminal. A stderr that is a
// file or a pipe (this test's) gets no frame at all (issue 32: logs filled with '\r' frames).
#include <string>

#include <gtest/gtest.h>

#include "cli_process.h"

namespace {

using namespace tessera::testing;

class ProgressBar : public CliScratchTest {};

TEST_F(ProgressBar, NoFramesOnAStderrThatIsNotATerminal) {
  const RunResult r = run_tessera(dir_, {"plan", "--model", "mixtral-8x7b", "--cluster", "h100:64", "--gbs", "256",
                                         "--seq", "4096", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err.substr(0, 200);
  EXPECT_EQ(r.err.find("searching ["), std::string::npos) << r.err.substr(0, 200);
}

}  // namespace
