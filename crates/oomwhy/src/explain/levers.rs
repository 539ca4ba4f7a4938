//! The levers of the program a finding shows, in that program's own
//! spelling: llama.cpp and the programs built on it (layers on the GPU,
//! context, batch, quantisation), RAPIDS' data libraries (batch bytes,
//! concurrent tasks, partitions, RMM's pool), and DeepSpeed ZeRO's
//! communication buckets. A program that shows itself is fixed through
//! its own options, never through a model-training recipe written for
//! another stack.

use super::catalogue::{fix, Cost, FixSpec, Shown};
use super::setting::{is_loading, Framework, NamedProgram, ProgramClass};
use crate::detect::grammar::program_names as n;
use crate::i18n::Said;
use crate::record::{fact, Era, Finding, Fix};
use crate::say;
use crate::units::format_size as fmt;

/// llama.cpp and the programs built on its ggml library: the same
/// options, each spelled its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LlamaFamily {
    /// llama.cpp's own programs (llama-cli, llama-server, main).
    LlamaCpp,
    KoboldCpp,
    /// The Python binding (`llama_cpp.Llama`).
    LlamaCppPython,
    Ollama,
    LmStudio,
    /// Only ggml shows: a program built on it that does not name itself.
    Ggml,
}

impl LlamaFamily {
    /// The member of the family the finding shows, by the names in its
    /// text, reporter, engine and traceback files; front ends before
    /// llama.cpp, whose sources they all carry.
    pub(super) fn of(f: &Finding) -> Option<LlamaFamily> {
        let places = super::setting::places_named(f, &[fact::REPORTED_BY, fact::ENGINE], false);
        let any = |marks: &[&str]| places.iter().any(|p| marks.iter().any(|m| p.contains(m)));
        if any(&["koboldcpp"]) {
            Some(LlamaFamily::KoboldCpp)
        } else if any(&["llama-cpp-python", "llama_cpp/", "llama_cpp."]) {
            Some(LlamaFamily::LlamaCppPython)
        } else if any(&["ollama"]) {
            Some(LlamaFamily::Ollama)
        } else if any(&["lm studio", "lmstudio", "lm-studio"]) {
            Some(LlamaFamily::LmStudio)
        } else if any(&["llama.cpp", "llama-server", "llama-cli"]) {
            Some(LlamaFamily::LlamaCpp)
        } else if f.era == Some(Era::LlamaCpp)
            || Framework::of(f) == Framework::Ggml
            || any(&["ggml"])
        {
            Some(LlamaFamily::Ggml)
        } else {
            None
        }
    }
}

/// The words of llama.cpp's loader and of its front ends when the model
/// itself did not load.
const MODEL_LOAD_WORDS: &[&str] = &[
    "error loading model",
    "failed to load model",
    "unable to load model",
    "llama_model_load",
    "llm_load_tensors",
    "load_tensors",
];

/// The model was being loaded: its weights are what did not fit.
fn at_model_load(f: &Finding) -> bool {
    let text = f.text.to_ascii_lowercase();
    is_loading(f) || MODEL_LOAD_WORDS.iter().any(|w| text.contains(w))
}

/// `-ngl`, `-c`, `-b`, `--cache-type-k`: llama.cpp's options and their
/// front ends' names for them.
pub(super) const FEWER_LAYERS: FixSpec = FixSpec::new(
    "llama-cpp-fewer-layers",
    "Offload fewer layers or shrink the context",
    "少放几层到 GPU 上，或缩小上下文",
)
.frameworks(&[Framework::Ggml])
.cost(Cost::Speed)
.sources(&[
    "llama.cpp: tools/main/README.md (-ngl, -c, -b, -ub, --cache-type-k)",
    "koboldcpp --help (--gpulayers, --contextsize, --blasbatchsize)",
    "llama-cpp-python API reference: Llama (n_gpu_layers, n_ctx, n_batch)",
    "Ollama documentation: Modelfile parameters (num_ctx, num_batch, num_gpu)",
]);

/// While the model loads its weights are what does not fit: a smaller
/// quantisation, or fewer layers on the GPU.
pub(super) const SMALLER_QUANT_OR_FEWER_LAYERS: FixSpec = FixSpec::new(
    "llama-cpp-smaller-quant-or-fewer-layers",
    "Load a smaller quantisation or put fewer layers on the GPU",
    "换更小的量化版本，或少放几层到 GPU 上",
)
.frameworks(&[Framework::Ggml])
.cost(Cost::Quality)
.sources(&[
    "llama.cpp: tools/main/README.md (-ngl, -c)",
    "koboldcpp --help (--gpulayers, --contextsize)",
    "llama-cpp-python API reference: Llama (n_gpu_layers, n_ctx)",
    "Ollama documentation: Modelfile parameters (num_ctx, num_gpu)",
]);

/// The llama.cpp family's levers, in the spelling of the member the
/// finding shows: at model load a smaller quantisation or fewer layers on
/// the GPU; while it runs, fewer layers, a smaller context or batch.
pub(super) fn llama_levers(f: &Finding, family: LlamaFamily) -> Fix {
    use LlamaFamily as L;
    if at_model_load(f) {
        let how = match family {
            L::KoboldCpp => say!(
                en: "The model's weights did not fit: load a smaller quantisation of the model (a Q4_K_M instead of a Q8_0 GGUF) or lower --gpulayers (the layers koboldcpp puts on the GPU; the rest run on the CPU, slower); a smaller --contextsize also shrinks the KV cache set up at load.",
                zh: "放不下的是模型权重：换模型更小的量化版本（用 Q4_K_M 而不是 Q8_0 的 GGUF），或者调低 --gpulayers（koboldcpp 放到 GPU 上的层数；其余的层在 CPU 上跑，会慢一些）；更小的 --contextsize 也能缩小加载时建立的 KV cache。"
            ),
            L::LlamaCppPython => say!(
                en: "The model's weights did not fit: load a smaller quantisation of the model (a Q4_K_M instead of a Q8_0 GGUF) or pass a smaller n_gpu_layers to Llama(...) (the layers put on the GPU; -1 puts all of them there, the rest run on the CPU, slower); a smaller n_ctx also shrinks the KV cache set up at load.",
                zh: "放不下的是模型权重：换模型更小的量化版本（用 Q4_K_M 而不是 Q8_0 的 GGUF），或者给 Llama(...) 传更小的 n_gpu_layers（放到 GPU 上的层数；-1 表示全部放上去，其余的层在 CPU 上跑，会慢一些）；更小的 n_ctx 也能缩小加载时建立的 KV cache。"
            ),
            L::Ollama => say!(
                en: "The model's weights did not fit: pull a smaller quantisation or size of the model (a q4_K_M tag, fewer parameters), or set num_gpu lower (the layers Ollama puts on the GPU; the rest run on the CPU, slower) in the model's options (PARAMETER in a Modelfile, /set parameter in `ollama run`, or the request's options); a smaller num_ctx also shrinks the KV cache set up at load.",
                zh: "放不下的是模型权重：拉取更小的量化版本或更小的模型（q4_K_M 标签、参数更少的模型），或者在模型选项里调低 num_gpu（Ollama 放到 GPU 上的层数；其余的层在 CPU 上跑，会慢一些），选项写在 Modelfile 的 PARAMETER、`ollama run` 里的 /set parameter 或请求的 options 里；更小的 num_ctx 也能缩小加载时建立的 KV cache。"
            ),
            L::LmStudio => say!(
                en: "The model's weights did not fit: download a smaller quantisation of the model (a Q4_K_M instead of a Q8_0 GGUF) or lower GPU Offload (the layers put on the GPU; the rest run on the CPU, slower) in the model's load settings; a smaller Context Length also shrinks the KV cache set up at load.",
                zh: "放不下的是模型权重：下载模型更小的量化版本（用 Q4_K_M 而不是 Q8_0 的 GGUF），或者在模型的加载设置里调低 GPU Offload（放到 GPU 上的层数；其余的层在 CPU 上跑，会慢一些）；更小的 Context Length 也能缩小加载时建立的 KV cache。"
            ),
            L::LlamaCpp => say!(
                en: "The model's weights did not fit: load a smaller quantisation of the model (a Q4_K_M instead of a Q8_0 GGUF) or lower -ngl / --n-gpu-layers (the layers put on the GPU; the rest run on the CPU, slower); a smaller context (-c) also shrinks the KV cache set up at load.",
                zh: "放不下的是模型权重：换模型更小的量化版本（用 Q4_K_M 而不是 Q8_0 的 GGUF），或者调低 -ngl / --n-gpu-layers（放到 GPU 上的层数；其余的层在 CPU 上跑，会慢一些）；更小的上下文（-c）也能缩小加载时建立的 KV cache。"
            ),
            L::Ggml => say!(
                en: "The model's weights did not fit: load a smaller quantisation of the model (a Q4_K_M instead of a Q8_0 GGUF) or put fewer layers on the GPU (llama.cpp's -ngl / --n-gpu-layers; in a front end its GPU layers or GPU offload setting; the rest run on the CPU, slower); a smaller context also shrinks the KV cache set up at load.",
                zh: "放不下的是模型权重：换模型更小的量化版本（用 Q4_K_M 而不是 Q8_0 的 GGUF），或者少放几层到 GPU 上（llama.cpp 的 -ngl / --n-gpu-layers；前端程序里是它的 GPU 层数或 GPU offload 设置；其余的层在 CPU 上跑，会慢一些）；更小的上下文也能缩小加载时建立的 KV cache。"
            ),
        };
        return fix(&SMALLER_QUANT_OR_FEWER_LAYERS, how);
    }
    let how = match family {
        L::KoboldCpp => say!(
            en: "Lower --gpulayers (the layers koboldcpp puts on the GPU), a smaller --contextsize, or a smaller --blasbatchsize (the prompt is processed in batches of that many tokens); the same settings are in its launcher. A smaller quantisation of the model (a Q4_K_M GGUF) also leaves more room.",
            zh: "调低 --gpulayers（koboldcpp 放到 GPU 上的层数），用更小的 --contextsize，或更小的 --blasbatchsize（prompt 按这么多 token 一批来处理）；启动器窗口里也有同样的设置。换模型更小的量化版本（Q4_K_M 的 GGUF）也能腾出空间。"
        ),
        L::LlamaCppPython => say!(
            en: "Pass a smaller n_gpu_layers (the layers put on the GPU; -1 puts all of them there), n_ctx (the context) or n_batch to Llama(...); a smaller quantisation of the model (a Q4_K_M GGUF) also leaves more room.",
            zh: "给 Llama(...) 传更小的 n_gpu_layers（放到 GPU 上的层数；-1 表示全部放上去）、n_ctx（上下文）或 n_batch；换模型更小的量化版本（Q4_K_M 的 GGUF）也能腾出空间。"
        ),
        L::Ollama => say!(
            en: "Lower num_ctx (the context) or num_batch, or set num_gpu lower (the layers Ollama puts on the GPU), in the model's options (PARAMETER in a Modelfile, /set parameter in `ollama run`, or the request's options); a smaller quantisation of the model (a q4_K_M tag) also leaves more room.",
            zh: "在模型选项里调低 num_ctx（上下文）或 num_batch，或者调低 num_gpu（Ollama 放到 GPU 上的层数），选项写在 Modelfile 的 PARAMETER、`ollama run` 里的 /set parameter 或请求的 options 里；换更小的量化版本（q4_K_M 标签）也能腾出空间。"
        ),
        L::LmStudio => say!(
            en: "In the model's load settings lower GPU Offload (the layers put on the GPU) or Context Length, or the evaluation batch size; a smaller quantisation of the model (a Q4_K_M GGUF) also leaves more room.",
            zh: "在模型的加载设置里调低 GPU Offload（放到 GPU 上的层数）或 Context Length，或调小评估用的 batch 大小；换模型更小的量化版本（Q4_K_M 的 GGUF）也能腾出空间。"
        ),
        L::LlamaCpp => say!(
            en: "Lower -ngl / --n-gpu-layers (the layers put on the GPU), reduce the context (-c / --ctx-size), lower -b / -ub (--batch-size, --ubatch-size), quantise the KV cache (--cache-type-k q8_0 --cache-type-v q8_0), or use a smaller quantisation of the model.",
            zh: "调低 -ngl / --n-gpu-layers（放到 GPU 上的层数），缩小上下文（-c / --ctx-size），调低 -b / -ub（--batch-size、--ubatch-size），量化 KV cache（--cache-type-k q8_0 --cache-type-v q8_0），或者换模型更小的量化版本。"
        ),
        L::Ggml => say!(
            en: "Put fewer layers on the GPU (llama.cpp's -ngl / --n-gpu-layers; in a front end its GPU layers or GPU offload setting), use a smaller context (-c) or batch (-b / -ub), or a smaller quantisation of the model.",
            zh: "少放几层到 GPU 上（llama.cpp 的 -ngl / --n-gpu-layers；前端程序里是它的 GPU 层数或 GPU offload 设置），用更小的上下文（-c）或 batch（-b / -ub），或者换模型更小的量化版本。"
        ),
    };
    fix(&FEWER_LAYERS, how)
}

/// Spark RAPIDS' own configuration: the batch each operator takes, the
/// tasks that share a GPU, the partitions.
pub(super) const SPARK_RAPIDS_LESS_PER_TASK: FixSpec = FixSpec::new(
    "spark-rapids-less-per-task",
    "Give each GPU task less data",
    "让每个 GPU 任务处理的数据少一些",
)
.cost(Cost::Speed)
.sources(&["spark-rapids documentation: configuration (spark.rapids.sql.batchSizeBytes, spark.rapids.sql.concurrentGpuTasks) and tuning guide"]);

/// RMM's pool: its initial and maximum size.
pub(super) const RMM_POOL_SIZE: FixSpec = FixSpec::new(
    "rmm-pool-size",
    "Fit RMM's pool to the GPU",
    "让 RMM 的内存池与这块 GPU 相称",
)
.sources(&["RMM documentation: pool_memory_resource (initial_pool_size, maximum_pool_size), rmm.reinitialize"]);

/// cuDF's and Dask's partitions, spilling and managed memory.
pub(super) const DATA_SMALLER_PARTITIONS: FixSpec = FixSpec::new(
    "data-smaller-partitions",
    "Process smaller partitions at once",
    "一次处理更小的分区",
)
.cost(Cost::Speed)
.sources(&[
    "Dask-CUDA documentation: spilling (device_memory_limit, jit_unspill)",
    "RMM documentation: rmm.reinitialize (managed_memory)",
]);

/// Spark RAPIDS' retry framework asked an operator to split its input
/// and the operator has no way to.
/// Two messages say so: an operator without a split policy (`was not
/// initialized with a splitPolicy`), and a piece of work run without
/// splittable input (`withRetryNoSplit`), whose spliterator answers the
/// request with `could not split inputs and retry`.
fn spark_split_without_policy(f: &Finding) -> bool {
    f.text.contains("SplitAndRetryOOM")
        && (f.text.contains("splitPolicy") || spark_no_input_to_split(f))
}

/// The retry framework asked to split a piece of work that takes no
/// splittable input (`GpuSplitAndRetryOOM: GPU OutOfMemory: could not split
/// inputs and retry`, spark-rapids' `NoInputSpliterator`).
fn spark_no_input_to_split(f: &Finding) -> bool {
    f.text
        .contains("GPU OutOfMemory: could not split inputs and retry")
}

/// RMM's pool could not grow: its maximum was reached, or the GPU had no
/// room for it (RMM's message is the same for both).
fn rmm_pool_exceeded(f: &Finding) -> bool {
    f.text.contains("Maximum pool size exceeded")
}

/// The pool size the finding's own code passed, where a traceback line
/// shows it: the number in the call that sets the pool up
/// (`initialize_allocator(PoolAllocation, 1000000000)`,
/// `rmm.reinitialize(pool_allocator=True, initial_pool_size=2e9)`), and
/// the call's text.
fn pool_size_in_code(f: &Finding) -> Option<(u64, String)> {
    let codes = f
        .traceback
        .iter()
        .flat_map(|tb| tb.frames.iter())
        .filter_map(|fr| fr.code.as_deref());
    for code in codes {
        let lower = code.to_ascii_lowercase();
        if !lower.contains("pool") {
            continue;
        }
        let Some(open) = lower.find('(') else {
            continue;
        };
        let after = &code[open..];
        let size = after
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .filter_map(literal_bytes)
            .find(|&b| b >= 1 << 20);
        if let Some(size) = size {
            return Some((size, code.trim().to_string()));
        }
    }
    None
}

/// A Python number literal as bytes (`1000000000`, `1_000_000_000`, `2e9`).
fn literal_bytes(token: &str) -> Option<u64> {
    let token = token.replace('_', "");
    if token.is_empty() || !token.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Ok(n) = token.parse::<u64>() {
        return Some(n);
    }
    let (mantissa, exponent) = token.split_once(['e', 'E'])?;
    let mantissa: f64 = mantissa.parse().ok()?;
    let exponent: i32 = exponent.parse().ok()?;
    let value = mantissa * 10f64.powi(exponent);
    (value.is_finite() && value >= 0.0 && value < u64::MAX as f64).then_some(value as u64)
}

/// The failing frame sets the pool up: its first reservation failed.
fn fails_setting_up_pool(f: &Finding) -> bool {
    let Some(last) = f.traceback.as_ref().and_then(|tb| tb.frames.last()) else {
        return false;
    };
    last.code.as_deref().is_some_and(|c| {
        let c = c.to_ascii_lowercase();
        c.contains("pool") && (c.contains("initialize") || c.contains("memory_resource"))
    })
}

/// The data library a finding shows, with its name.
pub(super) fn data_library(f: &Finding) -> Option<NamedProgram> {
    NamedProgram::of(f).filter(|p| p.class == ProgramClass::DataLibrary)
}

/// A data library's verdict: its title, and what its message means.
pub(super) fn data_library_reading(f: &Finding) -> Option<(Said, Said)> {
    let named = data_library(f)?;
    if spark_no_input_to_split(f) && spark_split_without_policy(f) {
        return Some((
            say!(
                en: "A Spark RAPIDS operator ran out of GPU memory and cannot split its input",
                zh: "Spark RAPIDS 的一个算子显存不足，而且没法拆分它的输入"
            ),
            say!(
                en: "Spark RAPIDS retries a GPU operator that runs out of memory, first after spilling, then on its input split in halves. \"Could not split inputs and retry\" means the work that ran out was run without an input it can split (spark-rapids' withRetryNoSplit): spilling did not free enough memory for it, the retry framework asked for a split it cannot make, and the task failed.",
                zh: "Spark RAPIDS 在 GPU 算子显存不足时会重试：先溢写（spill）再试，然后把输入对半拆分再试。\"could not split inputs and retry\" 的意思是显存不足的这段工作在运行时没有可拆分的输入（spark-rapids 的 withRetryNoSplit）：溢写腾出的显存不够它用，重试框架要求拆分，它却没法拆，于是任务失败了。"
            ),
        ));
    }
    if spark_split_without_policy(f) {
        return Some((
            say!(
                en: "A Spark RAPIDS operator ran out of GPU memory and cannot split its input",
                zh: "Spark RAPIDS 的一个算子显存不足，而且没法拆分它的输入"
            ),
            say!(
                en: "Spark RAPIDS retries a GPU operator that runs out of memory, first after spilling, then on its input split in halves (SplitAndRetryOOM). \"Not initialized with a splitPolicy\" means the operator that got the split request has no way to split its input: a limitation of that operator in this spark-rapids release, so the retry could not recover and the task failed.",
                zh: "Spark RAPIDS 在 GPU 算子显存不足时会重试：先溢写（spill）再试，然后把输入对半拆分再试（SplitAndRetryOOM）。\"not initialized with a splitPolicy\" 的意思是收到拆分请求的那个算子没办法拆分它的输入：这是这个 spark-rapids 版本里该算子的局限，所以重试救不回来，任务失败了。"
            ),
        ));
    }
    if named.name == n::SPARK_RAPIDS {
        return Some((
            say!(
                en: "A Spark RAPIDS task's data did not fit in the GPU memory it had",
                zh: "一个 Spark RAPIDS 任务的数据放不进它能用的显存"
            ),
            say!(
                en: "Spark RAPIDS retries a GPU operator that runs out of memory, after spilling and on smaller pieces of its input; this exception means the retries were used up: the batches of the tasks sharing this GPU do not fit in its memory.",
                zh: "Spark RAPIDS 在 GPU 算子显存不足时会先溢写（spill）、再用更小块的输入重试；这个异常说明重试已经用完了：共用这块 GPU 的各个任务的 batch 放不进它的显存。"
            ),
        ));
    }
    if rmm_pool_exceeded(f) {
        let detail = match (pool_size_in_code(f), fails_setting_up_pool(f)) {
            (Some((size, call)), true) => say!(
                en: "RMM's pool_memory_resource raises \"Maximum pool size exceeded\" when it cannot grow the pool, either past a maximum it was given or because the GPU would not give it the memory. Here the call that sets the pool up failed (`{call}`): its initial reservation of {size} could not be had, so the GPU had less than that free when the program started.",
                zh: "RMM 的 pool_memory_resource 在内存池没法扩大时报 \"Maximum pool size exceeded\"：要么是超过了给它设的上限，要么是 GPU 给不出这块显存。这里失败的正是建立内存池的那次调用（`{call}`）：它一开始要预留的 {size} 拿不到，说明程序启动时 GPU 上空闲的显存不到这么多。",
                size = fmt(size),
                call = call
            ),
            (Some((size, call)), false) => say!(
                en: "RMM's pool_memory_resource raises \"Maximum pool size exceeded\" when it cannot grow the pool, either past a maximum it was given or because the GPU would not give it the memory. The program sets its pool up with {size} (`{call}`); the work needed more than the pool could grow to.",
                zh: "RMM 的 pool_memory_resource 在内存池没法扩大时报 \"Maximum pool size exceeded\"：要么是超过了给它设的上限，要么是 GPU 给不出这块显存。程序建立内存池时给的大小是 {size}（`{call}`）；这次的工作需要的比内存池能扩到的还多。",
                size = fmt(size),
                call = call
            ),
            (None, _) => say!(
                en: "RMM's pool_memory_resource raises \"Maximum pool size exceeded\" when it cannot grow the pool, either past a maximum it was given (maximum_pool_size) or because the GPU would not give it the memory.",
                zh: "RMM 的 pool_memory_resource 在内存池没法扩大时报 \"Maximum pool size exceeded\"：要么是超过了给它设的上限（maximum_pool_size），要么是 GPU 给不出这块显存。"
            ),
        };
        return Some((
            say!(
                en: "RMM's memory pool could not grow to hold the allocation",
                zh: "RMM 的内存池没法扩大到放下这次分配"
            ),
            detail,
        ));
    }
    None
}

/// A data library's own lever.
pub(super) fn data_library_fix(f: &Finding) -> Option<Fix> {
    let named = data_library(f)?;
    if named.name == n::SPARK_RAPIDS {
        let mut how = say!(
            en: "Give each GPU task less: lower spark.rapids.sql.batchSizeBytes (e.g. 512m), set spark.rapids.sql.concurrentGpuTasks=1 so fewer tasks share the GPU, and use more, smaller partitions (spark.sql.shuffle.partitions, spark.sql.files.maxPartitionBytes).",
            zh: "让每个 GPU 任务少处理一些：调低 spark.rapids.sql.batchSizeBytes（比如 512m），设 spark.rapids.sql.concurrentGpuTasks=1 让共用 GPU 的任务少一些，并用更多、更小的分区（spark.sql.shuffle.partitions、spark.sql.files.maxPartitionBytes）。"
        );
        if spark_split_without_policy(f) && !spark_no_input_to_split(f) {
            how = how.then(say!(
                en: "The operator itself cannot split: a newer spark-rapids release may give it a split policy; if it persists, report it to spark-rapids with the query plan and the operator in the stack trace.",
                zh: "这个算子本身没法拆分：更新的 spark-rapids 版本可能给它加上了拆分策略；如果问题依旧，把查询计划和堆栈里的算子一起报告给 spark-rapids。"
            ));
        }
        return Some(fix(&SPARK_RAPIDS_LESS_PER_TASK, how));
    }
    if rmm_pool_exceeded(f) {
        let how = match pool_size_in_code(f) {
            Some((size, _)) if fails_setting_up_pool(f) => say!(
                en: "Set the pool up with less than the GPU has free: pass a smaller initial size than {size} (or none, and let the pool grow as needed), and check what else holds the GPU (`nvidia-smi`). Where the pool has a maximum (maximum_pool_size), keep it within the GPU's free memory.",
                zh: "建立内存池时要的别超过 GPU 的空闲显存：初始大小给得比 {size} 小（或者不给，让内存池按需增长），并检查还有什么占着 GPU（`nvidia-smi`）。如果给内存池设了上限（maximum_pool_size），也让它不超过 GPU 的空闲显存。",
                size = fmt(size)
            ),
            _ => say!(
                en: "If the pool was given a maximum (maximum_pool_size, or rmm.reinitialize(pool_allocator=True, maximum_pool_size=...)), raise it or leave it unset so the pool can grow to the GPU's free memory; if the GPU itself is full, check what else holds it (`nvidia-smi`), process less data at once, or use managed memory (rmm.reinitialize(managed_memory=True)), which can spill to host RAM.",
                zh: "如果给内存池设了上限（maximum_pool_size，或 rmm.reinitialize(pool_allocator=True, maximum_pool_size=...)），调大它或者不设，让内存池能长到 GPU 的空闲显存那么大；如果是 GPU 本身满了，检查还有什么占着它（`nvidia-smi`），一次少处理一些数据，或者用托管内存（rmm.reinitialize(managed_memory=True)），它可以溢出到主机内存。"
            ),
        };
        return Some(fix(&RMM_POOL_SIZE, how));
    }
    Some(fix(
        &DATA_SMALLER_PARTITIONS,
        say!(
            en: "Process less at once: smaller partitions (Dask: more partitions, or a smaller blocksize or chunksize when reading; cuDF: read and process the data in chunks), let Dask-CUDA spill to host memory (LocalCUDACluster(device_memory_limit=...)), or use RMM's managed memory (rmm.reinitialize(managed_memory=True)), which can spill to host RAM.",
            zh: "一次少处理一些：用更小的分区（Dask：更多分区，或读取时用更小的 blocksize 或 chunksize；cuDF：分块读取和处理数据），让 Dask-CUDA 溢写到主机内存（LocalCUDACluster(device_memory_limit=...)），或者用 RMM 的托管内存（rmm.reinitialize(managed_memory=True)），它可以溢出到主机内存。"
        ),
    ))
}

/// DeepSpeed ZeRO's reduce and all-gather buckets, in its config.
pub(super) const DEEPSPEED_SMALLER_BUCKETS: FixSpec = FixSpec::new(
    "deepspeed-smaller-buckets",
    "Make DeepSpeed ZeRO's buckets smaller",
    "调小 DeepSpeed ZeRO 的 bucket",
)
.frameworks(&[Framework::PyTorch])
.cost(Cost::Speed)
.sources(&["DeepSpeed documentation: ZeRO configuration (reduce_bucket_size, allgather_bucket_size, offload_optimizer)"]);

/// The innermost frame in DeepSpeed ZeRO's code allocates one of its
/// communication buckets: its line names a bucket size.
fn in_zero_bucket(f: &Finding) -> bool {
    let Some(tb) = &f.traceback else {
        return false;
    };
    tb.frames
        .iter()
        .rev()
        .find(|fr| !fr.file.replace('\\', "/").contains("/torch/"))
        .is_some_and(|fr| {
            let file = fr.file.replace('\\', "/");
            file.contains("deepspeed/runtime/zero/")
                && fr
                    .code
                    .as_deref()
                    .is_some_and(|c| c.contains("bucket_size"))
        })
}

/// DeepSpeed ZeRO's bucket lever, where the failing frame allocates one.
pub(super) fn deepspeed_bucket_fix(f: &Finding) -> Option<Fix> {
    in_zero_bucket(f).then(|| {
        fix(
            &DEEPSPEED_SMALLER_BUCKETS,
            say!(
                en: "The failing line allocates a ZeRO communication bucket (its size is a multiple of the bucket size in the DeepSpeed config). Lower reduce_bucket_size and allgather_bucket_size in the config's zero_optimization section (the default is 5e8 elements; try 5e7), or offload the optimizer state to the CPU (\"offload_optimizer\": {{\"device\": \"cpu\"}}) to make room.",
                zh: "出错的那一行分配的是 ZeRO 的通信 bucket（大小是 DeepSpeed 配置里 bucket size 的若干倍）。在配置的 zero_optimization 部分调小 reduce_bucket_size 和 allgather_bucket_size（默认是 5e8 个元素；试试 5e7），或者把优化器状态卸载到 CPU（\"offload_optimizer\": {{\"device\": \"cpu\"}}）来腾出空间。"
            ),
        )
    })
}

/// The llama.cpp family's RAM: what is not on the GPU stays in host
/// memory, so fewer GPU layers would make it worse.
pub(super) const LLAMA_LESS_RAM: FixSpec = FixSpec::new(
    "llama-cpp-less-ram",
    "Load a smaller model or quantisation, or a smaller context",
    "换更小的模型或量化版本，或缩小上下文",
)
.cost(Cost::Quality)
.sources(&["Ollama documentation: FAQ (ollama ps, num_ctx) and Modelfile parameters"])
.pointless_when(&[Shown::QuantisedTo4Bits]);

/// The llama.cpp family's RAM when the model already runs at 4 bits: a
/// smaller quantisation saves little, and RAM beyond the model's own size
/// is the loader's copies (mapped file pages, per-GPU staging buffers).
pub(super) const LLAMA_RAM_BEYOND_MODEL: FixSpec = FixSpec::new(
    "llama-cpp-ram-beyond-model",
    "Find what holds RAM beyond the model's own size",
    "查清是什么在模型本身大小之外占着内存",
)
.sources(&["llama.cpp documentation: llama-cli options (--no-mmap, --split-mode, --main-gpu)"]);

/// The llama.cpp family's lever for host memory (RAM) that did not
/// suffice, given what the paste shows; `None` where no member of the
/// family shows.
pub(super) fn llama_host_lever(f: &Finding, shown: &[Shown]) -> Option<Fix> {
    let family = LlamaFamily::of(f)?;
    if shown.contains(&Shown::QuantisedTo4Bits) {
        return Some(fix(
            &LLAMA_RAM_BEYOND_MODEL,
            say!(
                en: "The model already runs quantised to 4 bits, so a smaller quantisation saves little. RAM that grows past the model file's size is the loader's copies: the file mapped into memory, plus host buffers for each GPU when the model is split over several. Load with --no-mmap, try one GPU (--split-mode none --main-gpu 0) to see whether the split multiplies it, and lower the context; if one GPU stays near the model's size, report the split's RAM use to the backend.",
                zh: "模型已经是 4 位量化，换更小的量化版本省不了多少。内存涨到超过模型文件大小，是加载器的副本：映射进内存的文件，以及模型分到多块 GPU 时每块 GPU 的主机端缓冲区。加 --no-mmap 加载，试试只用一块 GPU（--split-mode none --main-gpu 0），看是不是多卡切分让它成倍增加，并调小上下文；如果单卡时内存接近模型大小，就把多卡切分的内存占用报告给该后端。"
            ),
        ));
    }
    let how = match family {
        LlamaFamily::Ollama => say!(
            en: "What Ollama does not put on the GPU stays in RAM: pull a smaller quantisation or size of the model (a q4_K_M tag, fewer parameters) or lower num_ctx, and check that Ollama uses the GPU (`ollama ps` shows how much of the model is on it; the server log lists the GPUs it found), so the layers go to GPU memory instead; close other programs that hold RAM.",
            zh: "Ollama 没放到 GPU 上的部分都留在内存里：拉取更小的量化版本或更小的模型（q4_K_M 标签、参数更少的模型），或调低 num_ctx；并确认 Ollama 用上了 GPU（`ollama ps` 显示模型有多少在 GPU 上；服务日志列出它找到的 GPU），这样各层才会放进显存；关掉其他占内存的程序。"
        ),
        _ => say!(
            en: "What is not on the GPU stays in RAM: load a smaller quantisation or size of the model (a Q4_K_M GGUF, fewer parameters) or a smaller context, and check that the program uses the GPU so the layers go to GPU memory instead; close other programs that hold RAM.",
            zh: "没放到 GPU 上的部分都留在内存里：换更小的量化版本或更小的模型（Q4_K_M 的 GGUF、参数更少的模型），或缩小上下文；并确认程序用上了 GPU，这样各层才会放进显存；关掉其他占内存的程序。"
        ),
    };
    Some(fix(&LLAMA_LESS_RAM, how))
}

/// The names MLC-LLM's programs, packages and build trees carry
/// (`mlc-chat-cli`, `mlc_chat`, `mlc_llm`, `mlc-llm-build`).
const MLC_LLM_MARKS: &[&str] = &["mlc-chat", "mlc_chat", "mlc-llm", "mlc_llm"];

/// MLC-LLM shows in the message (its path), its traceback or the lines
/// around it.
pub(super) fn shows_mlc_llm(f: &Finding) -> bool {
    let text = f.text.to_ascii_lowercase();
    let nearby = f.nearby.to_ascii_lowercase();
    let in_traceback = f.traceback.as_ref().is_some_and(|tb| {
        tb.frames
            .iter()
            .any(|fr| MLC_LLM_MARKS.iter().any(|m| fr.file.contains(m)))
    });
    in_traceback
        || MLC_LLM_MARKS
            .iter()
            .any(|m| text.contains(m) || nearby.contains(m))
}

/// MLC-LLM's own levers: the model build's size and quantisation, its
/// context window and prefill chunk.
pub(super) const MLC_LLM_SMALLER_MODEL_OR_CONTEXT: FixSpec = FixSpec::new(
    "mlc-llm-smaller-model-or-context",
    "Use a smaller model build or a smaller context in MLC-LLM",
    "在 MLC-LLM 里换更小的模型版本或缩小上下文",
)
.cost(Cost::Quality)
.sources(&[
    "MLC-LLM documentation: CLI (--overrides \"context_window_size=1024;prefill_chunk_size=128\")",
    "MLC-LLM model builds: mlc-chat-config.json (context_window_size, prefill_chunk_size)",
]);

fn mlc_llm_lever() -> Fix {
    fix(
        &MLC_LLM_SMALLER_MODEL_OR_CONTEXT,
        say!(
            en: "MLC-LLM puts the model's weights on the GPU beside a KV cache sized by the context window and the buffers of one prefill chunk: use a smaller or more quantised build of the model (q4f16_1 or q3f16_1 rather than q0f16 or q4f32_1, or fewer parameters), or a smaller context_window_size and prefill_chunk_size (mlc_llm chat and serve take --overrides \"context_window_size=1024;prefill_chunk_size=128\"; older mlc-chat-cli builds read both from the model's mlc-chat-config.json).",
            zh: "MLC-LLM 在 GPU 上放模型权重，旁边是按上下文窗口大小分配的 KV cache 和一个 prefill 分块的缓冲区：换更小或量化程度更高的模型版本（用 q4f16_1 或 q3f16_1，而不是 q0f16 或 q4f32_1，或者参数更少的模型），或者调小 context_window_size 和 prefill_chunk_size（mlc_llm chat 和 serve 接受 --overrides \"context_window_size=1024;prefill_chunk_size=128\"；较早的 mlc-chat-cli 从模型的 mlc-chat-config.json 里读这两个值）。"
        ),
    )
}

/// The lever of the program a finding shows, for a GPU allocation that
/// failed; `None` where no program with its own levers shows.
pub(super) fn program_lever(f: &Finding) -> Option<Fix> {
    if let Some(family) = LlamaFamily::of(f) {
        return Some(llama_levers(f, family));
    }
    if shows_mlc_llm(f) {
        return Some(mlc_llm_lever());
    }
    data_library_fix(f)
}

/// This module's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    MLC_LLM_SMALLER_MODEL_OR_CONTEXT,
    FEWER_LAYERS,
    SMALLER_QUANT_OR_FEWER_LAYERS,
    LLAMA_LESS_RAM,
    LLAMA_RAM_BEYOND_MODEL,
    SPARK_RAPIDS_LESS_PER_TASK,
    RMM_POOL_SIZE,
    DATA_SMALLER_PARTITIONS,
    DEEPSPEED_SMALLER_BUCKETS,
];

/// Each case is a real paste of `fixtures/wild` (the outside audit's
/// first screens), read with the rule's boundary on the other side.
#[cfg(test)]
mod tests {
    use crate::record::Finding;

    fn wild(number: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/wild")
            .join(format!("{number}.txt"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn first(text: &str) -> Finding {
        crate::decode_str(text)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no finding in {text}"))
    }

    fn ids(f: &Finding) -> Vec<&str> {
        f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect()
    }

    /// The first fix's words in English and Chinese.
    fn first_fix(f: &Finding) -> (String, String) {
        let fix = &f.diagnosis.fixes[0];
        let zh = fix.zh.as_ref().map(|z| z.text.clone()).unwrap_or_default();
        (fix.how.clone(), zh)
    }

    /// Words of a deep-learning recipe that no program here has.
    fn no_training_recipe(en: &str, zh: &str) {
        for w in [
            "bfloat16",
            "Halve the batch",
            "gradient",
            "DataLoader",
            "torch",
        ] {
            assert!(!en.contains(w), "{w} in {en}");
        }
        for w in ["bfloat16", "梯度", "DataLoader"] {
            assert!(!zh.contains(w), "{w} in {zh}");
        }
    }

    /// A llama-cpp-python wheel's CUDA error as its build prints it: the
    /// vendored ggml path names the binding (the build machine's directory
    /// before `vendor/` left out).
    const LLAMA_CPP_PYTHON: &str = "CUDA error 2 at llama-cpp-python/vendor/llama.cpp/ggml-cuda.cu:7949: out of memory\ncurrent device: 0\n";

    /// koboldcpp's pool (1722), llama-cpp-python's CUDA error and a
    /// ggml Vulkan buffer at model load (1738): the family's levers first,
    /// each in that program's spelling; at model load a smaller
    /// quantisation or fewer layers.
    #[test]
    fn llama_cpp_s_family_gets_its_own_options() {
        for (number, id, words) in [
            (
                "1722",
                "llama-cpp-fewer-layers",
                &["--gpulayers", "--contextsize", "--blasbatchsize"][..],
            ),
            (
                LLAMA_CPP_PYTHON,
                "llama-cpp-fewer-layers",
                &["n_gpu_layers", "n_ctx", "n_batch"][..],
            ),
            (
                "1738",
                "llama-cpp-smaller-quant-or-fewer-layers",
                &["smaller quantisation", "-ngl", "GPU offload"][..],
            ),
        ] {
            let text = if number.contains('\n') {
                number.to_string()
            } else {
                wild(number)
            };
            let f = first(&text);
            assert_eq!(ids(&f)[0], id, "{number}");
            let (en, zh) = first_fix(&f);
            for w in words {
                assert!(en.contains(w), "{number}: {w} in {en}");
            }
            // The options keep their spelling in Chinese.
            assert!(
                zh.contains(words[0]) || zh.contains("量化"),
                "{number}: {zh}"
            );
            no_training_recipe(&en, &zh);
        }
        // ggml's VMM pool calls the driver API: the driver's error name;
        // its other allocations keep the runtime's.
        let vmm = &first(&wild("1722")).diagnosis.verdicts[0].detail;
        assert!(vmm.contains("CUDA_ERROR_OUT_OF_MEMORY"), "{vmm}");
        let runtime = &first(LLAMA_CPP_PYTHON).diagnosis.verdicts[0].detail;
        assert!(runtime.contains("cudaErrorMemoryAllocation"), "{runtime}");
        // The same buffer without the loader's words is not a model load.
        let running = first("unable to allocate Vulkan0 buffer\n");
        assert_eq!(ids(&running)[0], "llama-cpp-fewer-layers");
        // A CUDA error that names no member of the family gets none of it.
        let plain = first("CUDA error: out of memory\n");
        assert!(!ids(&plain).iter().any(|id| id.starts_with("llama-cpp")));
    }

    /// Ollama's check before it loads a model (1240): RAM's levers, not
    /// fewer GPU layers and not PyTorch's DataLoader.
    #[test]
    fn ollama_s_ram_check_gets_ollama_s_levers() {
        let f = first(&wild("1240"));
        assert_eq!(ids(&f), ["llama-cpp-less-ram"]);
        let (en, zh) = first_fix(&f);
        assert!(en.contains("num_ctx") && en.contains("ollama ps"), "{en}");
        assert!(zh.contains("num_ctx") && zh.contains("ollama ps"), "{zh}");
        no_training_recipe(&en, &zh);
    }

    /// Spark RAPIDS' SplitAndRetryOOM without a split policy (1719): its
    /// own configuration, and what the message means, in both languages.
    #[test]
    fn spark_rapids_gets_its_configuration() {
        let paste = wild("1719");
        let f = first(&paste);
        assert_eq!(ids(&f), ["spark-rapids-less-per-task", "free-the-gpu"]);
        let v = &f.diagnosis.verdicts[0];
        assert!(!v.title.contains("no sizes"), "{}", v.title);
        assert!(v.detail.contains("no way to split"), "{}", v.detail);
        let (en, zh) = first_fix(&f);
        for w in [
            "spark.rapids.sql.batchSizeBytes",
            "spark.rapids.sql.concurrentGpuTasks",
        ] {
            assert!(en.contains(w) && zh.contains(w), "{w}: {en} / {zh}");
        }
        assert!(en.contains("report it to spark-rapids"), "{en}");
        no_training_recipe(&en, &zh);
        assert_eq!(
            crate::explain::setting::Setting::of(&f).program,
            crate::explain::setting::Program::NoModel
        );
        // The same exception without the reason: no claim that the
        // operator cannot split.
        let cut = first(&paste.replace(" but was not initialized with a splitPolicy", ""));
        assert_eq!(ids(&cut)[0], "spark-rapids-less-per-task");
        let (en, _) = first_fix(&cut);
        assert!(!en.contains("cannot split"), "{en}");
    }

    /// SYCL's `Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY)`
    /// (3318): an out of memory whose status names host memory; neither
    /// language says the GPU filled.
    #[test]
    fn a_runtime_status_naming_host_memory() {
        let f = first(&wild("3318"));
        assert_eq!(f.category, crate::record::Category::Oom);
        assert_eq!(f.facts["memory"], "host");
        let v = &f.diagnosis.verdicts[0];
        assert!(v.title.contains("host memory"), "{}", v.title);
        assert!(!v.title.contains("filled the GPU"), "{}", v.title);
        let zh = f.diagnosis.headline_zh.as_deref().unwrap_or_default();
        assert!(zh.starts_with("内存不足"), "{zh}");
    }

    /// ggml's buffer failure through llama.cpp's loader (3225, 3322):
    /// likely_oom, llama.cpp's own lever first, and a verdict that says
    /// what ggml's source does rather than that the GPU ran out of
    /// resources.
    #[test]
    fn ggml_buffer_failure_is_an_allocation_that_failed() {
        for case in ["3225", "3322"] {
            let f = first(&wild(case));
            assert_eq!(f.category, crate::record::Category::LikelyOom, "{case}");
            assert_eq!(
                ids(&f)[0],
                "llama-cpp-smaller-quant-or-fewer-layers",
                "{case}"
            );
            let v = &f.diagnosis.verdicts[0];
            assert!(v.detail.contains("largest buffer"), "{}", v.detail);
            let headline = &f.diagnosis.headline;
            assert!(
                headline.starts_with("ggml could not allocate its"),
                "{headline}"
            );
            assert!(!headline.contains("resources"), "{headline}");
        }
    }

    /// spark-rapids' `GpuSplitAndRetryOOM: GPU OutOfMemory: could not
    /// split inputs and retry` (3315): found through its class alone, a
    /// stated out of GPU memory, read as work run without splittable
    /// input, with Spark RAPIDS' own configuration as the fix.
    #[test]
    fn spark_rapids_work_without_input_to_split() {
        let f = first(&wild("3315"));
        assert_eq!(f.category, crate::record::Category::Oom);
        assert_eq!(f.facts["memory"], "device");
        assert_eq!(ids(&f)[0], "spark-rapids-less-per-task");
        let v = &f.diagnosis.verdicts[0];
        assert!(v.detail.contains("withRetryNoSplit"), "{}", v.detail);
        let zh = v.zh.as_ref().map(|z| z.text.as_str()).unwrap_or_default();
        assert!(zh.contains("withRetryNoSplit"), "{zh}");
        let (en, zh) = first_fix(&f);
        assert!(en.contains("spark.rapids.sql.batchSizeBytes"), "{en}");
        assert!(!en.contains("split policy"), "{en}");
        no_training_recipe(&en, &zh);
    }

    /// RMM's "Maximum pool size exceeded" (1720, cupoch): RMM is named
    /// (not a file cut to `.h`), the pool is the lever, and where the
    /// traceback shows the call that set the pool up, its size is said.
    #[test]
    fn rmm_s_pool_is_the_lever() {
        let paste = wild("1720");
        let f = first(&paste);
        assert_eq!(f.facts["reported_by"], "RMM");
        assert_eq!(ids(&f), ["rmm-pool-size", "free-the-gpu"]);
        let v = &f.diagnosis.verdicts[0];
        assert!(!v.title.contains("no sizes"), "{}", v.title);
        let (en, zh) = first_fix(&f);
        assert!(en.contains("maximum_pool_size") && zh.contains("maximum_pool_size"));
        no_training_recipe(&en, &zh);
        // Python prints the header capitalised (the paste lowercased it):
        // the failing frame is the pool's set-up, with its 1 GB.
        let whole = first(&paste.replacen("traceback (most", "Traceback (most", 1));
        assert!(whole.traceback.is_some());
        let v = &whole.diagnosis.verdicts[0];
        assert!(
            v.detail.contains("953.67 MiB") && v.detail.contains("initialize_allocator"),
            "{}",
            v.detail
        );
        let (en, zh) = first_fix(&whole);
        assert!(en.contains("smaller initial size than 953.67 MiB"), "{en}");
        assert!(zh.contains("953.67 MiB"), "{zh}");
    }

    #[test]
    fn a_python_literal_is_read_as_bytes() {
        use super::literal_bytes;
        assert_eq!(literal_bytes("1000000000"), Some(1_000_000_000));
        assert_eq!(literal_bytes("1_000_000"), Some(1_000_000));
        assert_eq!(literal_bytes("2e9"), Some(2_000_000_000));
        assert_eq!(literal_bytes("cph"), None);
        assert_eq!(literal_bytes("1e400"), None);
    }

    /// DeepSpeed ZeRO-2's bucket (1620): the paste starts inside the
    /// traceback; with Python's header the failing frame shows the bucket,
    /// and its size leads. Without the header (no frames) the batch leads;
    /// with the frame outside ZeRO's code no bucket is named.
    #[test]
    fn deepspeed_s_bucket_leads_where_its_frame_allocates_it() {
        let paste = wild("1620");
        let whole = format!("Traceback (most recent call last):\n{paste}");
        let f = first(&whole);
        assert_eq!(ids(&f)[0], "deepspeed-smaller-buckets");
        // The batch and the backward pass's advice follow.
        assert!(ids(&f).contains(&"reduce-batch-size"), "{:?}", ids(&f));
        let (en, zh) = first_fix(&f);
        assert!(en.contains("reduce_bucket_size") && zh.contains("reduce_bucket_size"));
        assert_eq!(ids(&first(&paste))[0], "reduce-batch-size");
        let elsewhere = first(&whole.replace("runtime/zero/stage2.py", "runtime/engine.py"));
        assert!(!ids(&elsewhere).contains(&"deepspeed-smaller-buckets"));
    }

    /// ComfyUI's cut message (1467) gets ComfyUI's options after the whole
    /// message; PyTorch's whole cudaMallocAsync message keeps its own.
    /// On DirectML (fixtures/generic_oom_directml_tensor.log, ComfyUI's
    /// environment in its frames) ComfyUI's options replace the web UI's.
    #[test]
    fn comfyui_gets_comfyui_s_options() {
        let f = first(&wild("1467"));
        assert_eq!(ids(&f), ["find-whole-message", "comfyui-low-vram"]);
        let whole = first(&fixture("torch_malloc_async_exact_padding.log"));
        assert!(
            !ids(&whole).contains(&"comfyui-low-vram"),
            "{:?}",
            ids(&whole)
        );
        // The forum flattened the traceback's indentation and cut its
        // header: the same frames as Python prints them.
        let directml = fixture("generic_oom_directml_tensor.log");
        let mut python = String::from("Traceback (most recent call last):\n");
        for line in directml.lines() {
            let indent = if line.starts_with("File ") {
                "  "
            } else if line.starts_with("return ") {
                "    "
            } else {
                ""
            };
            python.push_str(&format!("{indent}{line}\n"));
        }
        let f = first(&python);
        assert!(f.traceback.is_some());
        assert_eq!(ids(&f), ["comfyui-low-vram"]);
        let (en, zh) = first_fix(&f);
        assert!(
            en.contains("--lowvram") && !en.contains("--medvram"),
            "{en}"
        );
        assert!(
            zh.contains("--lowvram") && !zh.contains("--medvram"),
            "{zh}"
        );
    }

    /// scikit-learn's pairwise distances (1753): no PyTorch shows, so no
    /// PyTorch fix; its own chunked function. OpenNMT-py's onmt_train
    /// (1739) is a Python trainer.
    #[test]
    fn a_python_library_without_pytorch_gets_no_pytorch_fix() {
        let f = first(&wild("1753"));
        assert_eq!(ids(&f), ["allocate-less-at-once"]);
        let (en, zh) = first_fix(&f);
        assert!(
            en.contains("pairwise_distances_chunked") && zh.contains("pairwise_distances_chunked")
        );
        no_training_recipe(&en, &zh);
        // A frame in PyTorch's package: PyTorch runs, its fixes stay.
        let torch = wild("1753").replace(
            "/usr/local/lib/python2.7/dist-packages/sklearn/utils/extmath.py",
            "/usr/local/lib/python2.7/dist-packages/torch/utils/data/dataloader.py",
        );
        assert!(ids(&first(&torch)).contains(&"lighter-dataloader-workers"));
        let onmt = first(&wild("1739"));
        assert!(
            ids(&onmt).contains(&"lighter-dataloader-workers"),
            "{:?}",
            ids(&onmt)
        );
        assert!(!ids(&onmt).contains(&"shrink-the-killed-process"));
    }

    /// MLC-LLM's Vulkan OOM (fixtures/wild/2002.txt, its conda build path
    /// naming mlc-chat-cli) is fixed through MLC-LLM's own levers first;
    /// the same message from a TVM build that names no MLC-LLM keeps the
    /// Vulkan fixes.
    #[test]
    fn mlc_llm_is_fixed_through_its_model_and_context() {
        let text = wild("2002");
        let ids = crate::explain::test_support::fix_ids(&text);
        assert_eq!(ids[0], "mlc-llm-smaller-model-or-context", "{ids:?}");
        let f = first(&text);
        let how = &f.diagnosis.fixes[0];
        assert!(how.how.contains("context_window_size"), "{}", how.how);
        assert!(how.how.contains("prefill_chunk_size"), "{}", how.how);
        let plain = text
            .replace("mlc-llm-build", "tvm-build")
            .replace("mlc-chat-cli-nightly-package", "tvm-package");
        let ids = crate::explain::test_support::fix_ids(&plain);
        assert!(!ids.iter().any(|x| x.starts_with("mlc-llm")), "{ids:?}");
    }
}
