// What a shared cache must know of a model so that only replicas that would compute the
// same numbers share values: the checkpoint's content, the weight formats and the kernel
// numerics (CPU tier, matrix engine). Replicas on different CPUs or with different
// --dtype flags get different identities and share nothing — by design, since their
// floats differ in the last bits and greedy answers could diverge.
#pragma once

#include <string>

#include "model/qwen3vl.h"

namespace qvl {

// The readable part: formats, precision, KV dtype and kernel tier, e.g.
// "v=q8,t=q8,p=bf16,kv=bf16,cpu=avx512bf16,amx=0".
std::string ModelNumerics(const Qwen3VLModel& model);

// 16 hex digits of SHA-256 over config.json, preprocessor_config.json, the tokenizer
// files and chat template (each file's size and first MiB), each weight
// file's name, size and safetensors header and 64 KiB sampled across its data (the
// tensors of two random-weight models of one config differ there), and ModelNumerics.
// Cheap: no more than about 1 MiB is read per file. Throws Error(kIo) when a file
// cannot be read.
std::string ModelIdentity(const Qwen3VLModel& model);

}  // namespace qvl
