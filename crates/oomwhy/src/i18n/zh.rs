//! Chinese that belongs to the language rather than to one explanation:
//! the titles of kinds and verdict codes (for `explain --list`, `--summary`
//! and the pages), the labels of facts, phases and confidences, and the
//! sections a memory snapshot adds. What the
//! explainer says about one finding is written in both languages where it
//! is said (`say!` in `explain/<family>.rs`) and travels with the record.

use crate::record::SnapshotReport;
use crate::units::format_size;

/// The Chinese title of a verdict code, for `explain --list`.
pub fn verdict_title(code: &str) -> Option<&'static str> {
    VERDICTS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, title, _)| *title)
}

/// JSON fact key, Chinese label (the "Details" lines of the text output).
const FACT_LABELS: &[(&str, &str)] = &[
    ("allocator", "分配器"),
    ("allocator_backend", "分配器后端"),
    ("assert", "断言"),
    ("assertion", "断言条件"),
    ("assertion_lines", "断言行数"),
    ("async_warning", "异步报告提示"),
    ("available", "可用"),
    ("call", "调用"),
    ("cgroup", "cgroup"),
    ("code_class", "状态码类别"),
    ("connection_error", "连接错误码"),
    ("constraint", "约束"),
    ("container", "容器"),
    ("cpu_blocks", "CPU block 数"),
    ("device_name", "设备名"),
    ("dll", "DLL"),
    ("dll_name", "DLL 名称"),
    ("docs_url", "文档链接"),
    ("driver_message", "驱动消息"),
    ("dtype", "数据类型"),
    ("engine", "推理引擎"),
    ("errno", "errno"),
    ("error_code", "错误码"),
    ("error_line", "错误行"),
    ("error_name", "错误名"),
    ("estimated_max_model_len", "估算的最长上下文"),
    ("exit_code", "退出码"),
    ("exit_code_signed", "退出码（有符号）"),
    ("failed_allocations", "失败的分配次数"),
    ("failed_check", "失败的检查"),
    ("failed_ranks", "失败的 rank"),
    ("file", "文件"),
    ("gpu_blocks", "GPU block 数"),
    ("heartbeat_timeout_ms", "心跳超时（ms）"),
    ("high_watermark_limit", "high watermark 上限"),
    ("hint", "提示"),
    ("host_memory_percent", "主机内存占用比例"),
    ("host_memory_used", "已用主机内存"),
    ("hsa_node", "HSA 节点"),
    ("jvm_detail", "JVM 的说明"),
    ("jvm_limit", "JVM 的上限"),
    ("jvm_stack", "运行 JVM 的程序"),
    ("kernel", "kernel"),
    ("killed_child", "被杀的子进程"),
    ("killed_processes", "被杀掉的进程数"),
    ("killer", "执行者"),
    ("kv_cache_tokens", "KV cache token 数"),
    ("last_error", "最后的错误"),
    ("launcher", "启动器"),
    ("library", "库"),
    ("limit", "上限（字节）"),
    ("line", "行"),
    ("local_rank", "local rank"),
    ("location", "位置"),
    ("max_seq_len", "max_model_len"),
    ("max_total_tokens", "max_total_tokens"),
    ("meaning", "状态码的含义"),
    ("mem_fraction_static", "SGLang 的 mem_fraction_static"),
    ("memory", "用完的内存"),
    ("memory_space", "内存空间"),
    ("nccl_error", "NCCL 错误"),
    ("nccl_version", "NCCL 版本"),
    ("node", "节点"),
    ("ntstatus", "NTSTATUS"),
    ("numel_in", "输入元素数"),
    ("numel_out", "输出元素数"),
    ("oom_kill_events", "OOM kill 事件数"),
    ("oom_score", "OOM 分数"),
    ("oom_score_adj", "OOM 分数调整（oom_score_adj）"),
    ("op", "操作"),
    ("op_requires", "OP_REQUIRES 检查"),
    ("op_type", "操作类型"),
    ("other_assertions", "其他断言"),
    ("pci", "PCI 地址"),
    ("pcie_error", "PCIe 错误"),
    ("kernel_panic", "内核 panic"),
    ("pid", "PID"),
    ("pids", "PID 列表"),
    ("pool", "内存池"),
    ("prefill_tokens", "prefill token 数"),
    ("pressure", "内存压力"),
    ("pressure_duration", "压力持续时间"),
    ("pressure_limit", "内存压力上限"),
    ("printed_as", "打印形式"),
    ("numbering", "编号方式"),
    ("renumbered_code", "新编号"),
    ("old_cuda_name", "CUDA 10.1 之前的旧名称"),
    ("process", "进程"),
    ("profiled_tokens", "profile 出的 token 数"),
    ("program_fragmentation", "程序碎片"),
    ("progress_bar", "进度条"),
    ("pytorch_limit", "PyTorch 上限"),
    ("raised_at", "抛出位置"),
    ("ran_for_ms", "已运行（ms）"),
    ("rank", "rank"),
    ("reason", "原因"),
    ("report", "报告类型"),
    ("reported_by", "报告者"),
    ("request", "申请量"),
    ("resource", "资源"),
    ("root_cause_error_file", "根因错误文件"),
    ("root_cause_exitcode", "根因退出码"),
    ("root_cause_host", "根因主机"),
    ("root_cause_local_rank", "根因 local rank"),
    ("root_cause_pid", "根因 PID"),
    ("root_cause_rank", "根因 rank"),
    ("root_cause_signal", "根因信号"),
    ("root_cause_time", "根因时间"),
    ("script", "脚本"),
    ("segment_size", "共享内存段大小（字节）"),
    ("seq_num", "序号"),
    ("service", "服务"),
    ("shape", "形状"),
    ("shell", "shell"),
    ("signal", "信号"),
    ("size_units", "大小单位"),
    ("manager", "资源管理器"),
    ("reported_via", "转述者"),
    ("setting", "设置项"),
    ("terminate_fraction", "终止阈值（占内存上限的比例）"),
    ("source", "源码位置"),
    ("stated_card_bytes", "文中写的显卡大小"),
    ("stated_in_prose", "仅在叙述中说明"),
    ("status", "状态"),
    ("step", "步数"),
    ("strerror", "错误描述"),
    ("table", "状态码表"),
    ("table_title", "状态码所属的 API"),
    ("threshold", "驱逐阈值"),
    ("timeout_ms", "超时（ms）"),
    ("total_including_request", "含本次申请的总量"),
    ("total_tokens", "token 总数"),
    ("trail_lines", "后续重复的行数"),
    ("unit", "systemd 单元"),
    ("usage", "用量（字节）"),
    ("used", "用量"),
    ("winerror", "WinError"),
    ("worker_pid", "worker 的 PID"),
    ("xid", "Xid"),
];

/// Fact key, value as a detector writes it, Chinese: the values that are
/// oomwhy's own words rather than text taken from the message.
const FACT_VALUES: &[(&str, &str, &str)] = &[
    ("memory", "device", "显存"),
    ("memory", "host", "主机内存"),
    ("memory", "pinned host", "锁页主机内存"),
    ("memory", "work-group local", "工作组本地内存"),
    ("memory", "unknown", "报错没说是哪种内存"),
    ("memory", "shared memory (/dev/shm)", "共享内存（/dev/shm）"),
    ("jvm_limit", "heap", "堆（-Xmx）"),
    ("jvm_limit", "gc_overhead", "垃圾回收开销上限（堆）"),
    ("jvm_limit", "direct_buffer", "直接缓冲区内存"),
    ("jvm_limit", "metaspace", "Metaspace"),
    ("jvm_limit", "compressed_class_space", "压缩类空间"),
    ("jvm_limit", "permgen", "永久代"),
    ("jvm_limit", "native_thread", "本地线程"),
    ("jvm_limit", "array_size", "数组长度上限"),
    ("jvm_stack", "spark_executor", "Spark executor"),
    ("jvm_stack", "spark_driver", "Spark driver"),
    ("jvm_stack", "pyspark_driver", "PySpark（driver）"),
    (
        "jvm_stack",
        "spark_local",
        "Spark local 模式（driver 的 JVM）",
    ),
    ("jvm_stack", "spark", "Spark"),
    ("jvm_stack", "hadoop_mapreduce", "Hadoop MapReduce"),
    ("jvm_stack", "elasticsearch", "Elasticsearch"),
    ("jvm_stack", "djl", "DJL"),
    ("jvm_stack", "tensorflow_java", "TensorFlow Java"),
    ("jvm_stack", "gradle", "Gradle"),
    ("code_class", "memory", "显存或内存不足"),
    ("code_class", "maybe", "可能与显存有关"),
    ("code_class", "not_memory", "与显存无关"),
    ("code_class", "usage", "调用方用法错误"),
    ("printed_as", "name", "名称"),
    ("printed_as", "number", "数字"),
    ("printed_as", "message", "说明文字"),
    ("numbering", "CUDA before 10.1", "CUDA 10.1 之前的编号"),
    ("numbering", "ambiguous", "不确定（CUDA 10.1 前后编号不同）"),
    ("request", "more than 1 EB", "超过 1 EB"),
    ("report", "invoked", "内核 OOM killer 被触发"),
    ("report", "agent", "torchelastic agent 的报告"),
    ("error_line", "missing", "缺失"),
    ("op_requires", "true", "是"),
    (
        "error_name",
        "TDR (timeout detection and recovery)",
        "TDR（超时检测与恢复）",
    ),
];

/// The Chinese of a fact's value that oomwhy wrote itself.
pub fn fact_value(key: &str, value: &str) -> Option<&'static str> {
    FACT_VALUES
        .iter()
        .find(|(k, v, _)| *k == key && *v == value)
        .map(|(_, _, zh)| *zh)
}

/// The words of a version hint (`PyTorch ≈2.11 or later`) in Chinese; a
/// version or a name stays as it is.
const VERSION_WORDS: &[(&str, &str)] = &[
    (
        "jaxlib before 2023 (90% preallocated)",
        "2023 年之前的 jaxlib（预先占用 90% 显存）",
    ),
    (" or later", " 及以后"),
    (" engine", " 引擎"),
];

/// A version hint in Chinese.
pub fn version_hint(hint: &str) -> String {
    VERSION_WORDS
        .iter()
        .fold(hint.to_string(), |text, (en, zh)| text.replace(en, zh))
}

/// The Chinese label of a fact key.
pub fn fact_label(key: &str) -> Option<&'static str> {
    FACT_LABELS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, label)| *label)
}

/// The Chinese name of a training phase.
pub fn phase(name: &str) -> Option<&'static str> {
    Some(match name {
        "forward" => "前向传播",
        "backward" => "反向传播",
        "optimizer_step" => "优化器更新",
        "optimizer" => "优化器更新",
        "data_loading" => "数据加载",
        "model_load" | "model_loading" => "模型加载",
        "checkpoint" => "读写 checkpoint",
        "compile" => "编译",
        "checkpoint_loading" => "加载 checkpoint",
        "checkpoint_saving" => "保存 checkpoint",
        "evaluation" => "评估",
        "inference" => "推理",
        "generation" => "生成",
        "initialization" => "初始化",
        "startup" => "启动",
        "compilation" => "编译",
        "to_device" => "搬到 GPU",
        _ => return None,
    })
}

/// The Chinese word for a phase confidence.
pub fn confidence(level: &str) -> Option<&'static str> {
    Some(match level {
        "high" => "高",
        "medium" => "中",
        "low" => "低",
        _ => return None,
    })
}

/// Verdict code, Chinese title and detail alternatives (most specific
/// first; the last names no figure).
/// Each verdict code's Chinese title and the summary its `explain` page
/// and `explain --list` show (no figures of one finding).
const VERDICTS: &[(&str, &str, &str)] = &[
    ("memory_outside_process", "显存被这个进程之外的东西占着", "有一大块显存被这个进程之外的东西占着：容器里看不到的其他进程、桌面会话，或者共用这块 GPU 的另一个容器或虚拟机。"),
    ("numbers_inconclusive", "从这些数字看不出为什么失败", "PyTorch 持有的加上这次申请还不到整块卡的一半，报错里也看不到别的大到能占满其余空间的东西。所以不是工作负载放不下：显存多半被报错没显示的东西占着（另一个进程、桌面会话、另一个容器），或者在失败和读数之间被释放了。"),
    ("figures_missing", "报错在数字之前就被截断了", "只剩下申请量：说明容量、空闲显存和 PyTorch 占用的部分被截掉了，而正是这些数字能说明是工作负载放不下、另一个进程占着 GPU，还是显存碎片化。从剩下的内容看不出可能的原因。"),
    ("dev_shm_full", "/dev/shm 太小，DataLoader 的 worker 不够用", "DataLoader 的 worker 通过共享内存把每个 batch 交给主进程，也就是 /dev/shm 里的文件（以内存为后端的 tmpfs）。它写满之后，worker 再往里写就会触发 SIGBUS。Docker 默认只给容器 64 MB 的 /dev/shm，几个图像 batch 就能超过。这是主机内存，不是显存；如果同时碰到容器自己的内存上限，worker 也可能被直接杀掉（SIGKILL）。"),
    ("native_crash", "原生代码崩溃了", "原生代码（C/C++ 扩展、图像或视频解码器、CUDA 库，或早先已被破坏的内存）出错或主动 abort，所以 Python 没有打印出原因的调用栈。它本身不是显存不足。"),
    ("snapshot_no_oom_event", "这个快照里没有 OOM 事件", "快照里没有记录到 OOM 事件，所以下面的汇总是拍快照时的显存状态，不是失败那一刻的。"),
    ("snapshot_other_stream", "有足够大的空闲块，但属于另一个 stream", "同一池类型里有足够大的空闲块，但属于另一个 stream。缓存分配器只在分配某个块的那个 stream 上复用它。"),
    ("snapshot_private_pool", "空闲显存在私有池（CUDA graph）里", "足够大的空闲块在私有内存池里（CUDA graph 的池或 torch.cuda.MemPool）。普通分配用不上它；私有池会一直留着自己的显存，直到 graph 或池被释放。"),
    ("snapshot_oversize_rule", "有足够大的空闲块，但 max_split_size 规则不让用", "有一块足够大的空闲块，但设了 max_split_size 后，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。"),
    ("snapshot_pending_free", "释放的显存还在等其他 stream", "有些块已被张量释放，但还不能复用：它们在其他 stream 上用过（record_stream），分配器要等那些 stream 上的事件完成才会复用。"),
    ("snapshot_fragmentation", "碎片化：空闲显存够，却没有一个足够大的空洞", "空闲显存加起来够，但最大的可用空洞放不下这次申请：空闲空间夹在部分占用的段里的活块之间，分配器既不能归还，也不能合并。"),
    ("snapshot_shortage", "显存不够：活着的张量占满了 GPU", "活着的张量占满了 PyTorch 预留的显存；就算把所有空闲空洞合起来也放不下这次申请。这次分配发生时，必须有更少的显存在用。"),
    ("system_memory_fallback", "PyTorch 占用的比整块卡还多：驱动在拿系统内存顶替显存", "PyTorch 占用的显存超过了卡的容量，只有驱动用系统内存顶替显存时才可能（NVIDIA Windows 驱动 536.40 起的 Sysmem Fallback，或统一内存的设备）。借来的内存也用完后分配才失败：工作负载远大于这块卡。"),
    ("inconsistent_numbers", "这条报错里的数字不可能同时成立", "报错里的几个数字加起来对不上。它们不是同一时刻采样的，或者驱动对显存做了虚拟化（Windows WDDM、WSL、vGPU、MIG）。oomwhy 不再基于它们往下推理。"),
    ("request_exceeds_capacity", "单次分配就超过了这块 GPU 能提供的全部显存", "这一次申请比任何一块卡都大。换什么分配器设置都没用：多半是某个维度算错、一次搬上了整个数据集，或者对超长输入算注意力矩阵。"),
    ("memory_limit", "是为这个进程设的显存上限拒绝了分配，不是硬件不够", "这次申请超过了为进程设置的内存上限（如 set_per_process_memory_fraction() 或内存池上限）；GPU 本身可能还有空间。"),
    ("free_exceeds_request", "设备报告的空闲显存比申请的还多", "设备报告的空闲显存多于申请量：空闲值是在失败之后读取的，可能已经变化，或者没有连续的空间。"),
    ("other_processes", "其他进程占用了这块 GPU 的很大一部分", "同一块 GPU 上的其他进程占用了大量显存：另一个任务、残留的 Jupyter 内核，或者选错卡的其他 rank。"),
    ("memory_outside_pytorch", "缺的显存大部分被 PyTorch 分配器之外的东西占着", "相当一部分显存被 PyTorch 缓存分配器之外的东西占用：CUDA 上下文、cuDNN/cuBLAS 工作区、NCCL 缓冲区、其他库或其他进程。"),
    ("fragmentation", "显存碎片化：PyTorch 手里的空闲空间用不上", "PyTorch 手里有足够的空闲缓存，但都是零碎的小块，没有一块足够大的连续区域放得下这次申请。"),
    ("cuda_graph_pools", "CUDA graph 把空闲显存留在了私有池里", "CUDA graph 的私有池占着空闲显存，只给捕获它们的 graph 使用，普通张量用不上。"),
    ("non_pytorch_memory", "这个进程在 PyTorch 之外占用了大量显存", "这个进程在 PyTorch 缓存之外占用了不少显存：CUDA 上下文、库的工作区、NCCL 或同进程里的其他库。"),
    ("capacity_exhausted", "工作负载放不进显存", "显存确实被真实数据占满了：权重、梯度、优化器状态和激活值加起来超过了可用的显存。"),
    ("memory_growth", "多次 OOM 之间显存在增长：有东西在累积", "这块设备上最近几次 OOM 时已分配的显存一次比一次多。显存在步与步之间持续增长，说明有张量跨迭代被保留：没用 .item() 就累加的 loss、追加到列表里的输出、不断变大的缓存或序列长度。"),
    ("fails_at_start", "第一步就失败了", "刚开始就失败：这套配置连一次都跑不下来。要改的是配置（batch、序列长度、精度），而不是去找泄漏。"),
    ("late_failure", "成功跑了很多步之后才失败", "同样的配置之前跑过很多次。要么某个 batch 比其他的大（变长序列、评估阶段），要么显存随时间增长。"),
    ("outside_allocator_oom", "PyTorch 分配器之外的一次 CUDA 调用显存不足", "这次失败不是 PyTorch 的缓存分配器报的，而是另一处 CUDA 调用（创建上下文、cuBLAS/cuDNN 句柄、kernel 启动、其他库）没拿到显存，所以报错里没有大小。通常是卡已经被占满了：PyTorch 的缓存、其他库或其他进程。"),
    ("async_error_location", "调用栈多半指错了行", "CUDA 异步报告 kernel 错误：错误在下一次与 GPU 同步的调用处才冒出来，而不是在出错的那个 kernel。上面的 Python 调用栈显示的是 PyTorch 发现错误的位置，通常晚于真正出错的位置。设 CUDA_LAUNCH_BLOCKING=1 重跑可以找到真正的位置。"),
    ("native_fail_fast", "原生代码故意终止了进程", "0xC0000409（STATUS_STACK_BUFFER_OVERRUN）在现代 Windows 上也用于 fail-fast：某个原生库（CUDA、cuDNN、驱动、扩展）检测到无法继续的状态，主动结束了进程。显存或内存耗尽是常见诱因之一，但退出码本身不能证明这一点。"),
    ("mps_high_watermark", "是 PyTorch 的 MPS 内存上限拒绝了分配，不是机器内存不够", "PyTorch 的 MPS 上限（high watermark）拒绝了这次分配；系统可能还有内存。"),
    ("unified_memory_exhausted", "macOS 给 GPU 的内存用完了（MPS 上限已关闭）", "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 关掉了上限，于是 macOS 本身没法再给 GPU 分配统一内存。Apple GPU 和 CPU 共用同一块内存，其他程序也在占用它。"),
    ("host_ram_exhausted", "机器的内存（RAM）用完了：是主机内存，不是显存", "这次失败的是 CPU 内存：数据加载、把 checkpoint 整个读进内存、pin_memory 缓冲区、DataLoader 子进程各自的副本，都会占用主机内存。显存相关的设置对它没有用。"),
    ("host_memory_limit", "任务超出了调度器给它的内存上限", "任务超出了 Slurm/Kubernetes 给它的内存上限而被杀，即使机器上还有空闲内存。"),
    ("jvm_limit", "JVM 达到了它自己的上限（堆、Metaspace、直接内存或线程数），不是机器的内存用完了", "java.lang.OutOfMemoryError 后面的说明指出是哪个上限：Java heap space 和 GC overhead limit exceeded 是堆（-Xmx；Spark 里是 spark.executor.memory 或 spark.driver.memory），Direct buffer memory 是 -XX:MaxDirectMemorySize，Metaspace 是 -XX:MaxMetaspaceSize，unable to create native thread 是操作系统的线程或进程数限制，Requested array size exceeds VM limit 是单个数组太长。不管机器上有多少空闲内存，JVM 到了这些上限都会拒绝。"),
    ("killed_by_sigkill", "被 SIGKILL 杀掉：很可能是主机内存不足，但日志证明不了", "进程收到 SIGKILL（退出码 -9 或 137）。最常见的原因是 Linux 的 OOM killer 或容器的内存上限，但手动 kill、调度器超时或抢占也会发出同样的信号。看内核日志（dmesg）能确认。"),
    ("xla_preallocation", "XLA 预分配的显存池没有空间放这个缓冲区", "XLA 启动时默认预先占用 75% 的显存，之后所有缓冲区都从这个池里分配；这次的缓冲区放不下。"),
    ("xla_host_memory_limit", "XLA 的锁页主机内存达到上限（默认 64 GB）", "XLA 卸载到主机的锁页内存达到上限（默认 64 GB）；这不是显存不足。"),
    ("kv_cache_too_small", "KV cache 放不下配置的上下文长度", "推理引擎加载权重后剩下的显存放不下一个最长上下文的 KV cache：调低 max_model_len、提高 gpu_memory_utilization，或用量化权重。"),
    ("masked_oom", "报错里没说显存不足，但实际上多半就是", "这条报错没写“out of memory”，但它常常是在显存不足时出现的。要确认：把 batch size 减半重跑（错误消失或推迟出现，就是显存的问题）；运行时用 `nvidia-smi -l 1` 观察；在出错那一步之前打印 torch.cuda.memory_summary()。"),
    ("index_out_of_range", "GPU 上有索引越界", "有索引超出了范围：最常见的是标签值 ≥ 类别数，或 token id ≥ embedding 大小。这不是显存不足；CUDA 上下文此后已不可用。"),
    ("device_assert", "GPU kernel 自己的检查失败了", "kernel 里的断言失败：输入的取值不满足 kernel 的要求（越界的索引、不在 [0, 1] 里的概率、NaN 等）。这不是显存不足。"),
    ("kernel_fault", "kernel 出错了", "某个 kernel 在运行时出错（未对齐的访问或运行中崩溃）：多半是自定义的 CUDA/Triton kernel，或是为其他 PyTorch/CUDA 版本编译的扩展（flash-attn、xformers、bitsandbytes、apex），也可能是显示看门狗（Windows TDR）或驱动/硬件故障。这不是显存不足；CUDA 异步报告错误，调用栈可能指向更靠后的行。"),
    ("arch_mismatch", "二进制不是为这块 GPU 编译的", "发起 kernel 的库里既没有这块 GPU 计算能力的机器码，也没有可以现编的 PTX：新卡配了只编到旧架构的版本（如 sm_120 的 RTX 50 系列配上只到 sm_90 的 wheel）、旧卡已被新版本放弃，或扩展编译时的 TORCH_CUDA_ARCH_LIST 没包含这块卡。对比 torch.cuda.get_arch_list() 和 torch.cuda.get_device_capability()。"),
    ("collateral_timeout", "是更早那个错误的后果，不是另一个原因", "这次超时是因为别的 rank 已经崩溃，没能参加集合通信。先解决最早的那个错误。"),
    ("collateral_failure", "是更早那个错误的后果，不是另一个原因", "这条报错是更早一个错误引起的连锁反应。先解决最早的那个错误。"),
    ("collective_timeout", "一次集合通信一直在等一个始终没到的 rank", "集合通信超时：通常是某个 rank 已经崩溃或卡住（显存不足、数据加载卡死、各 rank 走了不同的代码分支），而不是网络慢。先找到最早出错的 rank。"),
    ("nccl_failure", "集合通信失败", "NCCL 通信失败。设 NCCL_DEBUG=INFO 重跑，NCCL 会打印具体原因：网络接口、共享内存（/dev/shm）、版本不匹配，或者某个 rank 已经先崩溃了。"),
    ("launcher_report", "启动器只报告了有 worker 退出", "torchrun 的 ChildFailedError 只是汇总，真正的错误在根因 rank 自己的输出里。"),
    ("xid_error", "NVIDIA 驱动报告了 Xid 事件", "Xid 是 NVIDIA 内核驱动记录的 GPU 事件（见 dmesg）。按 NVIDIA 的 Xid 文档处理：有的是应用自身的错误（如 31：GPU 内存页错误），有的指向硬件或驱动问题（如 48、63、64、79、94、95、119）。"),
    ("gpu_status_code", "状态码的含义", "这是 GPU 运行时、驱动或库返回的状态码，含义见状态码表；它不是显存不足错误。"),
    ("hardware_fault", "是 GPU 或它的连接坏了，不是你的程序", "这个 Xid 表示硬件或驱动层面的故障（掉卡、ECC 错误、GSP 超时等）。重启后如果还出现，检查散热、供电、PCIe 连接，并联系管理员或厂商；改程序解决不了。"),
    ("native_access_violation", "原生代码访问了不属于它的内存", "0xC0000005（访问冲突）来自原生代码：扩展、驱动或版本不匹配的 CUDA/cuDNN DLL。显存不足一般不会直接导致它；先检查各个原生组件的版本是否匹配。"),
    ("paging_file_too_small", "Windows 无法提交虚拟内存：是主机内存，不是显存", "WinError 1455 表示页面文件太小：Windows 为每个加载 CUDA DLL 的进程（包括每个 DataLoader worker）预留大量虚拟内存。调大页面文件或减少 DataLoader worker 数。"),
    ("allocation_failed", "一次 GPU 显存分配失败", "一次 GPU 分配失败。报错没有给出数字，所以先看是配置太大（batch、序列长度、模型）还是有其他进程占着卡。"),
    ("shared_memory_limit", "kernel 的配置超出了这块 GPU 的共享内存", "kernel（通常是 Triton 自动调优出的配置）需要的 shared memory 超出了这块 GPU 每个 block 的上限。这和显存无关：换一个适合这块卡的配置（更小的 BLOCK_SIZE、num_stages），或者换一条不走 Triton 的路径。"),
    ("platform_limit", "拒绝这次分配的是厂商运行时或平台的限制，不是显存本身", "显存本来放得下这次申请，但厂商运行时或固件的限制拒绝了它：Intel GPU 的 Level Zero 单次分配上限（约 4 GiB），或 AMD APU 在 BIOS 里划给显卡的那一小块内存。先放宽或调大这个限制，而不是先减小 batch。"),
];

/// The era evidence `crate::snapshot` writes, in Chinese (key names kept).
const SNAPSHOT_EVIDENCE: &[(&str, &str)] = &[
    (
        "trace events carry `user_metadata`",
        "事件带有 `user_metadata`",
    ),
    (
        "trace events carry `compile_context`, not `user_metadata`",
        "事件带有 `compile_context`，没有 `user_metadata`",
    ),
    (
        "`external_annotations` present",
        "有 `external_annotations`",
    ),
    (
        "trace events without `compile_context`",
        "事件没有 `compile_context`",
    ),
    (
        "no trace events to narrow it further",
        "没有事件记录，无法进一步缩小范围",
    ),
    (
        "`allocator_settings` present, no `external_annotations`",
        "有 `allocator_settings`，没有 `external_annotations`",
    ),
    (
        "trace events carry `time_us`, no `allocator_settings`",
        "事件带有 `time_us`，没有 `allocator_settings`",
    ),
    (
        "blocks carry `history`, not `frames`",
        "块带有 `history`，没有 `frames`",
    ),
    (
        "blocks carry `frames` and `address`",
        "块带有 `frames` 和 `address`",
    ),
    (
        "a bare segment list has no trace to narrow it further",
        "只有段的列表，没有事件记录，无法进一步缩小范围",
    ),
    ("trace events without `time_us`", "事件没有 `time_us`"),
    ("no version-specific key present", "没有哪个版本特有的键"),
    (
        "`segment_map`/`segment_unmap` events (expandable segments)",
        "有 `segment_map`/`segment_unmap` 事件（expandable segments）",
    ),
];

/// The sections a memory snapshot adds to a finding, in Chinese: the same
/// rows and figures as `crate::snapshot::text_sections`.
pub fn snapshot_sections(r: &SnapshotReport) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let layout = if r.layout == "segment_list" {
        "torch.cuda.memory_snapshot() 返回的段列表"
    } else {
        "torch.cuda.memory._snapshot()/_dump_snapshot()"
    };
    let evidence: Vec<&str> = r
        .era_evidence
        .iter()
        .map(|e| {
            SNAPSHOT_EVIDENCE
                .iter()
                .find(|(en, _)| en == e)
                .map_or(e.as_str(), |(_, zh)| zh)
        })
        .collect();
    let mut about = vec![
        format!("格式：{layout}，pickle 协议 {}", r.pickle_protocol),
        format!("版本：PyTorch {}（{}）", r.era, evidence.join("；")),
    ];
    if let Some(conf) = &r.alloc_conf {
        let conf = if conf.is_empty() { "（空）" } else { conf };
        about.push(format!("PYTORCH_CUDA_ALLOC_CONF：{conf}"));
    }
    if let Some(o) = &r.oom {
        about.push(match o.state.as_str() {
            "at_oom" if o.events_after == 0 => {
                "状态：OOM 那一刻（快照紧接着 OOM 保存，例如由 OOM 观察者保存）".to_string()
            }
            "at_oom" => format!(
                "状态：OOM 那一刻（之后的 {} 个事件没有改变任何块）",
                o.events_after
            ),
            "rewound" => format!(
                "状态：倒推回 OOM 那一刻（快照晚了 {} 个事件才保存，已把它们撤销）",
                o.events_after
            ),
            _ => format!(
                "状态：OOM 之后（之后的 {} 个事件没能全部撤销）",
                o.events_after
            ),
        });
    }
    out.push(("显存快照".to_string(), about));
    if let Some(o) = &r.oom {
        let pool = match o.pool.as_str() {
            "large" => "大块池",
            "small" => "小块池",
            other => other,
        };
        let rows = [
            (
                "申请",
                o.request_bytes,
                format!(
                    "按 512 字节取整；{pool}；向 cudaMalloc 申请的段为 {}",
                    format_size(o.allocation_bytes)
                ),
                true,
            ),
            (
                "最大可用空洞",
                o.largest_usable_hole_bytes,
                format!(
                    "同一池类型、stream {}、默认池、max_split_size 规则",
                    o.stream
                ),
                true,
            ),
            (
                "可用空洞合计",
                o.usable_class_free_bytes,
                "这一类空闲块加在一起".to_string(),
                false,
            ),
            (
                "设备上空闲",
                o.device_free_bytes.unwrap_or(0),
                "失败时 CUDA 报告的空闲显存".to_string(),
                true,
            ),
            (
                "其他 stream 上的空洞",
                o.largest_other_stream_hole_bytes,
                "最大的一块；这个 stream 不能复用".to_string(),
                false,
            ),
            (
                "私有池里的空洞",
                o.largest_private_pool_hole_bytes,
                "最大的一块；只给 CUDA graph / MemPool 用".to_string(),
                false,
            ),
            (
                "因过大被拒的空洞",
                o.largest_oversize_hole_bytes,
                "最大的一块；max_split_size 规则".to_string(),
                false,
            ),
            (
                "待释放",
                o.pending_free_bytes,
                "已释放，在等其他 stream".to_string(),
                false,
            ),
        ];
        let label_width = rows
            .iter()
            .map(|(label, ..)| unicode_width::UnicodeWidthStr::width(*label))
            .max()
            .unwrap_or(0);
        let mut lines = Vec::new();
        for (label, value, meaning, always) in rows {
            if value == 0 && !always {
                continue;
            }
            let pad = " ".repeat(label_width - unicode_width::UnicodeWidthStr::width(label));
            lines.push(format!(
                "{label}{pad} {:>11}  {meaning}",
                format_size(value)
            ));
        }
        lines.push(if o.largest_usable_hole_bytes >= o.request_bytes {
            "→ 有足够大的可用空洞：这不是失败那一刻的状态".to_string()
        } else {
            "→ 没有一个可用空洞放得下".to_string()
        });
        if !o.stack.is_empty() {
            lines.push(format!("失败的分配位置：{}", o.stack.join(" ← ")));
        }
        out.push((format!("申请与空闲空间（GPU {}）", o.device), lines));
    }
    for d in &r.devices {
        let mut summary = format!(
            "已预留 {}，共 {} 个段{}；活张量 {}（张量实际请求 {}）；空洞里空闲 {}（最大 {}）",
            format_size(d.reserved_bytes),
            d.segments,
            if d.expandable_segments > 0 {
                format!("（{} 个 expandable）", d.expandable_segments)
            } else {
                String::new()
            },
            format_size(d.allocated_bytes),
            format_size(d.tensor_bytes),
            format_size(d.free_in_segments_bytes),
            format_size(d.largest_hole_bytes),
        );
        if d.pending_free_bytes > 0 {
            summary.push_str(&format!("；待释放 {}", format_size(d.pending_free_bytes)));
        }
        if d.private_pool_bytes > 0 {
            summary.push_str(&format!("；私有池里 {}", format_size(d.private_pool_bytes)));
        }
        let mut lines = vec![summary];
        for site in &d.top_sites {
            lines.push(format!(
                "{:>11}  {:>8} 个块  {}",
                format_size(site.bytes),
                site.blocks,
                site.location
            ));
        }
        out.push((
            format!("按分配位置统计的在用显存（GPU {}）", d.device),
            lines,
        ));
    }
    out
}

/// A verdict's Chinese summary for its `explain` page: its detail without
/// the figures of one finding.
pub fn verdict_summary(code: &str) -> Option<&'static str> {
    VERDICTS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, _, summary)| *summary)
        .filter(|summary| !summary.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Finding;
    use std::collections::HashMap;

    /// Every phase the context reads has a Chinese name (a missing one
    /// printed `阶段：model load`).
    #[test]
    fn every_phase_has_a_chinese_name() {
        for name in crate::context::phase_names() {
            assert!(phase(name).is_some(), "{name}");
        }
    }

    /// A Chinese page has the English page's sections and cites only what
    /// the English page cites.
    #[test]
    fn chinese_pages_follow_their_english_page() {
        let english: HashMap<&str, &str> =
            crate::explain::docs::EXPLANATIONS.iter().copied().collect();
        let urls = |text: &str| -> Vec<String> {
            text.split_whitespace()
                .filter(|w| w.starts_with("https://"))
                .map(|w| {
                    // A URL ends where Chinese punctuation begins.
                    let url: String = w.chars().take_while(char::is_ascii).collect();
                    url.trim_end_matches([')', ',', '.', ';']).to_string()
                })
                .collect()
        };
        for (code, text) in crate::explain::docs::chinese_pages() {
            let original = english
                .get(code)
                .unwrap_or_else(|| panic!("{code}: no such code"));
            assert!(
                text.starts_with(&format!("# {code}: ")),
                "{code}: title line"
            );
            for section in ["## 示例", "## 为什么会发生", "## 怎么解决", "## 延伸阅读"]
            {
                assert!(text.contains(section), "{code}: missing {section}");
            }
            for url in urls(text) {
                assert!(
                    original.contains(&url),
                    "{code}: {url} is not on the English page"
                );
            }
        }
    }

    /// Every verdict code has a Chinese title and a summary without the
    /// figures of one finding.
    #[test]
    fn every_verdict_has_a_title_and_summary_without_figures() {
        for (code, title, summary) in VERDICTS {
            assert!(!title.is_empty() && !title.contains('{'), "{code}");
            assert!(!summary.is_empty() && !summary.contains('{'), "{code}");
        }
    }

    /// The first finding of a shipped fixture.
    fn fixture_finding(name: &str) -> Finding {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(name);
        let mut analysis = crate::Analysis::new();
        analysis.add(crate::scan(std::fs::File::open(path).unwrap(), name).unwrap());
        analysis.finish().0.remove(0)
    }

    /// A verdict shared with older kinds is worded for the new kind that
    /// gave it, not in the older kinds' terms.
    /// The Chinese title and detail the explainer wrote for `code`.
    fn verdict(code: &str, f: &Finding) -> Option<(String, String)> {
        let v = f.diagnosis.verdicts.iter().find(|v| v.code == code)?;
        let zh = v.zh.as_ref()?;
        Some((zh.title.clone(), zh.text.clone()))
    }

    #[test]
    fn shared_verdicts_speak_of_their_kind() {
        let ptxas = fixture_finding("ptxas_alloc_failure_ccminer.log");
        let (title, detail) = verdict("host_ram_exhausted", &ptxas).unwrap();
        assert_eq!(title, "多半是编译机器的内存用完了");
        assert!(detail.starts_with("ptxas "), "{detail}");
        assert!(detail.contains("它失败了 2 次"), "{detail}");

        let lost = fixture_finding("gpu_fallen_off_bus_dmesg.log");
        let (_, detail) = verdict("hardware_fault", &lost).unwrap();
        assert!(detail.starts_with("NVIDIA 内核驱动报告"), "{detail}");

        let triton = fixture_finding("triton_out_of_resources_shared_memory.log");
        let (_, detail) = verdict("shared_memory_limit", &triton).unwrap();
        assert!(
            detail.contains("要用 65.00 KiB 的 shared memory"),
            "{detail}"
        );
        assert!(detail.contains("上限 64.00 KiB"), "{detail}");
    }
}
