# One bf16 training step of a HuggingFace `transformers` model built from its config (no download) under
# torch.compile; prints one JSON line: first and second step times, every Inductor counter, and the files the run
# added to the cache folders (by kind), so runs in place and relocated can be compared field by field.
# Usage: hf_step.py LABEL [MODEL]   MODEL: gpt2 (default: 2 layers, vocab 8192, batch 8 x 512) or llama
# (2 layers, hidden 1024, vocab 8192). The cache folders come from TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR.
# As a pod's Python entrypoint and a build's warm-up script would, with the `ccpack` package installed:
# CCPACK_API_RESTORE=ARCHIVE:PUBKEY calls ccpack.restore() before torch is imported, CCPACK_API_CREATE=OUT:KEY
# calls ccpack.create() after the steps, and CCPACK_API_STATUS=1 adds ccpack.status() after the steps; the
# reports go into the JSON line (api_restore, api_create, api_status).
import json, os, sys, time

def listing():
    out = set()
    for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        root = os.environ.get(var)
        for dirpath, _, files in os.walk(root or "/nonexistent"):
            out.update(os.path.join(dirpath, f) for f in files)
    return out

def kind(path):
    base = os.path.basename(path)
    if base.endswith(".best_config"): return "best_config"
    if "/fxgraph/" in path: return "fxgraph"
    if "/aotautograd/" in path: return "aotautograd"
    if base.startswith("__grp__"): return "triton_group"
    if base.endswith(".cubin"): return "triton_kernel"
    return "other"

def work_metrics():
    """Tuning work this process really did (torch's compilation_time_metrics: calls and seconds per timed
    function). Inductor's counters replay the cold compile's counts on every FX-graph cache hit, so
    select_algorithm_autotune or the benchmark counters of a warm run say what the warm-up did, not this run."""
    from torch._dynamo.utils import compilation_time_metrics
    words = ("coordinate_descent", "benchmark_all_configs", "precompile", "autotune", "bench")
    return {k: [len(v), round(sum(v), 2)] for k, v in compilation_time_metrics.items() if any(w in k for w in words)}

REAL = {"coordesc_bench": 0}

def count_real_coordesc():
    """Counts the coordinate-descent benchmarks this process runs (the counter's increments inside
    CachingAutotuner._coordinate_descent_tuning), apart from the counts an FX-graph hit replays."""
    from torch._dynamo.utils import counters
    from torch._inductor.runtime import triton_heuristics as th
    inner = th.CachingAutotuner._coordinate_descent_tuning
    def counted(self, *args, **kwargs):
        before = counters["inductor"]["coordesc_tuning_bench"]
        try:
            return inner(self, *args, **kwargs)
        finally:
            REAL["coordesc_bench"] += counters["inductor"]["coordesc_tuning_bench"] - before
    th.CachingAutotuner._coordinate_descent_tuning = counted

def build(name):
    import transformers
    if name == "llama":
        cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=1024, intermediate_size=2816,
                                       num_attention_heads=16, num_key_value_heads=16, vocab_size=8192,
                                       max_position_embeddings=512)
        return transformers.LlamaForCausalLM(cfg)
    cfg = transformers.GPT2Config(n_layer=2, vocab_size=8192, n_positions=512)
    return transformers.GPT2LMHeadModel(cfg)

def api(var):
    value = os.environ.get(var)
    return value.split(":", 1) if value else None

def main():
    label = sys.argv[1]
    name = sys.argv[2] if len(sys.argv) > 2 else "gpt2"
    reports = {}
    if api("CCPACK_API_RESTORE"):
        import ccpack
        archive, pub = api("CCPACK_API_RESTORE")
        t0 = time.time()
        r = ccpack.restore(archive, trust=pub)
        reports["api_restore"] = {"s": round(time.time() - t0, 3), "files": r.get("files"),
                                  "components": [(c.get("name"), c.get("path"), c.get("pickle_paths_rewritten"))
                                                 for c in r.get("components", [])]}
    import torch
    from torch._dynamo.utils import counters
    torch.manual_seed(0)
    count_real_coordesc()
    before = listing()
    model = build(name).cuda().to(torch.bfloat16)
    model.config.use_cache = False
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    cmodel = torch.compile(model, mode=os.environ.get("MODE", "max-autotune-no-cudagraphs"))
    ids = torch.randint(0, 8192, (8, 512), device="cuda")
    def step():
        out = cmodel(input_ids=ids, labels=ids)
        out.loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        return float(out.loss)
    t0 = time.time(); step(); first = time.time() - t0
    t0 = time.time(); loss = step(); second = time.time() - t0
    added = sorted(listing() - before)
    if os.environ.get("ADDED_OUT"):
        with open(os.environ["ADDED_OUT"], "w") as f:
            f.write("\n".join(added) + "\n")
    by_kind = {}
    for p in added:
        by_kind[kind(p)] = by_kind.get(kind(p), 0) + 1
    if api("CCPACK_API_CREATE"):
        import ccpack
        out, key = api("CCPACK_API_CREATE")
        r = ccpack.create(out, sign_key=key, note="hf_step " + name)
        reports["api_create"] = {"archive_bytes": r.get("archive_bytes"), "files": r.get("files"),
                                 "signed_by": r.get("signed_by")}
    if os.environ.get("CCPACK_API_STATUS"):
        import ccpack
        reports["api_status"] = ccpack.status()
    print(json.dumps({**reports, "label": label, "model": name, "first_step_s": round(first, 2), "second_step_s": round(second, 3),
                      "loss": loss, "work": work_metrics(), "real": dict(REAL), "counters": {k: dict(v) for k, v in counters.items()},
                      "added": by_kind, "added_kernels": sorted({os.path.basename(p)[:-6] for p in added if p.endswith(".cubin")})}),
          flush=True)

if __name__ == "__main__":
    main()
