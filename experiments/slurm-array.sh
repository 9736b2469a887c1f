#!/usr/bin/env bash
# One shard of an rdtp-sim sweep per Slurm array task; merge the shards when all are done.
#
#   sbatch --array=0-15 experiments/slurm-array.sh experiments/fig7a.toml out/fig7a
#   target/release/rdtp sim --merge out/fig7a/shard-* --out out/fig7a/all
#
# Run from the rdtp checkout (built: cargo build --release) on a shared file system. Every
# array task runs the runs whose index is its task id modulo the array size, with as many
# simulations at once as the CPUs Slurm gave it (--cpus-per-task).
#SBATCH --job-name=rdtp-sim
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=512M
#SBATCH --time=04:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
scenario=${1:?usage: sbatch --array=0-N experiments/slurm-array.sh SCENARIO.toml OUT_DIR [--set KEY=VALUE…]}
out=${2:?usage: sbatch --array=0-N experiments/slurm-array.sh SCENARIO.toml OUT_DIR [--set KEY=VALUE…]}
shift 2
# Shards are numbered from 0 whatever the array's first index is.
index=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
count=${SLURM_ARRAY_TASK_COUNT:?not a Slurm array task (use sbatch --array=…)}
exec target/release/rdtp sim "$scenario" --shard "$index/$count" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
    --out "$out/shard-$index" "$@"
