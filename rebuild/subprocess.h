// Running a program to its end and capturing what it prints: how the Slurm executor
// (slurm_executor.h) talks to sbatch, squeue and scancel.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace clickatron::rebuild {

struct ProgramOutput {
  int status = 0;      // exit status; 128 + N when killed by signal N
  std::string out;     // standard output
  std::string err;     // standard error
};

// Runs argv (argv[0] looked up on PATH) with no input and waits for it. An error only when
// it cannot be started ("cannot run sbatch: No such file or directory"); a non-zero exit
// is returned in status.
Result<ProgramOutput> RunProgram(const std::vector<std::string>& argv);

}  // namespace clickatron::rebuild
