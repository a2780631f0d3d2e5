# A serving-style workload for the settle proofs: a small `transformers` decoder (Llama-style, built from its config,
# no download) in inference under torch.compile(mode="max-autotune") with CUDA graphs, answering prompts of two
# shapes (batch x length) with static shapes, as a server's first requests would. Prints one JSON line: the time
# from the process's start to both first answers (the number a pod's readiness waits for), each shape's first call,
# every Inductor counter, and the files the run added to the cache folders by kind (hf_step.py's listing), so
# fresh restores of a settled and an unsettled archive can be compared field by field.
# Usage: serve_step.py LABEL   (cache folders from TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR; MODE overrides the
# compile mode; SHAPES="1x96,4x200" overrides the shapes; STEADY=N adds the steady-state time per call of each shape,
# the median of N timed calls after the first answers, in ms)
import time
START = time.time()
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_step import listing, kind, work_metrics, count_real_coordesc, REAL

def build():
    import transformers
    cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=768, intermediate_size=2048,
                                   num_attention_heads=12, num_key_value_heads=4, vocab_size=16384,
                                   max_position_embeddings=1024)
    return transformers.LlamaForCausalLM(cfg)

def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "run"
    shapes = [tuple(int(x) for x in s.split("x")) for s in os.environ.get("SHAPES", "1x96,4x200").split(",")]
    import torch
    from torch._dynamo.utils import counters
    torch.manual_seed(0)
    count_real_coordesc()
    before = listing()
    model = build().cuda().to(torch.bfloat16).eval()
    model.config.use_cache = False
    cmodel = torch.compile(model, mode=os.environ.get("MODE", "max-autotune"), dynamic=False)
    per_shape, answers = {}, []
    with torch.no_grad():
        for b, n in shapes:
            ids = torch.randint(0, 16384, (b, n), device="cuda")
            t0 = time.time()
            for _ in range(3):  # CUDA graph trees record on a later call: the answer a server gives is the third
                logits = cmodel(input_ids=ids).logits
            answers.append(int(logits[:, -1].argmax(-1).sum()))
            torch.cuda.synchronize()
            per_shape["%dx%d" % (b, n)] = round(time.time() - t0, 2)
    first_answers = time.time() - START
    steady = {}
    with torch.no_grad():
        for b, n in shapes[:] if int(os.environ.get("STEADY", "0")) else []:
            ids = torch.randint(0, 16384, (b, n), device="cuda")
            times = []
            for _ in range(int(os.environ["STEADY"])):
                t0 = torch.cuda.Event(enable_timing=True)
                t1 = torch.cuda.Event(enable_timing=True)
                t0.record()
                cmodel(input_ids=ids)
                t1.record()
                torch.cuda.synchronize()
                times.append(t0.elapsed_time(t1))
            times.sort()
            steady["%dx%d" % (b, n)] = round(times[len(times) // 2], 4)
    added = sorted(listing() - before)
    by_kind = {}
    for p in added:
        by_kind[kind(p)] = by_kind.get(kind(p), 0) + 1
    print(json.dumps({"label": label, "model": "serve", "first_answers_s": round(first_answers, 2),
                      "first_step_s": round(first_answers, 2), "per_shape_s": per_shape, "steady_ms": steady, "answers": answers, "work": work_metrics(), "real": dict(REAL),
                      "counters": {k: dict(v) for k, v in counters.items()}, "added": by_kind,
                      "added_kernels": sorted({os.path.basename(p)[:-6] for p in added if p.endswith(".cubin")})}),
          flush=True)

if __name__ == "__main__":
    main()
