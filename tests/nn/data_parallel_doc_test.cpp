// Runs the DataParallel program of docs/distributed.md, which the build cuts out of the page
// (cmake/DocSnippet.cmake), over sim:0 and sim:1 as `LOCUS_DEVICE=sim` runs it.

#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "tests/test_util.h"

namespace docs_distributed_data_parallel {
int main();  // the page's program
}

namespace locus {
namespace {

// LOCUS_DEVICE=sim and std::cout captured, for the scope's lifetime.
class SimRun {
 public:
  SimRun() : cout_(std::cout.rdbuf(captured_.rdbuf())) {
    if (const char* old = std::getenv("LOCUS_DEVICE")) old_ = old;
    ::setenv("LOCUS_DEVICE", "sim", 1);
  }
  ~SimRun() {
    std::cout.rdbuf(cout_);
    if (old_) ::setenv("LOCUS_DEVICE", old_->c_str(), 1);
    else ::unsetenv("LOCUS_DEVICE");
  }
  SimRun(const SimRun&) = delete;
  SimRun& operator=(const SimRun&) = delete;
  std::string output() const { return captured_.str(); }

 private:
  std::ostringstream captured_;
  std::streambuf* cout_;
  std::optional<std::string> old_;
};

TEST(DataParallelDoc, TheProgramOfTheDocsRunsOnTwoSimDevices) {
  std::string out;
  {
    SimRun run;
    EXPECT_EQ(docs_distributed_data_parallel::main(), 0);
    out = run.output();
  }
  EXPECT_NE(out.find("step 2: loss "), std::string::npos) << out;
  EXPECT_NE(out.find("output [8, 10]"), std::string::npos) << out;
  EXPECT_NE(out.find("parallel wraps model"), std::string::npos) << out;
}

}  // namespace
}  // namespace locus
