# A serving-style workload for the settle proofs: a small `transformers` decoder (Llama-style, built from its config,
# no download) in inference under torch.compile(mode="max-autotune") with CUDA graphs, answering prompts of two
# shapes (batch x length) with static shapes, as a server's first requests would. Prints one JSON line: the time
# from the process's start to both first answers (the number a pod's readiness waits for), each shape's first call,
# every Inductor counter, and the files the run added to the cache folders by kind (hf_step.py's listing), so
# fresh restores of a settled and an unsettled archive can be compared field by field.
# Usage: serve_step.py LABEL   (cache folders from TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR; MODE overrides the
# compile mode; SHAPES="1x96,4x200" overrides the shapes; STEADY=N adds the steady-state time per call of each shape,
# in ms: N calls in blocks of 10 back to back, the median block's time per call, so the GPU's time and not the
# launch gaps is measured). MODEL=plain serves a plain PyTorch decoder instead (4 layers, hidden 2048, no
# `transformers` import): a server whose own start-up is a few seconds, where the cache is most of the wait.
import time
START = time.time()
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_step import listing, kind, work_metrics, count_real_coordesc, REAL

def plain():
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d, heads, ff):
            super().__init__()
            self.heads = heads
            self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.up, self.down = nn.Linear(d, 2 * ff, bias=False), nn.Linear(ff, d, bias=False)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            x = x + self.o(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d))
            gate, up = self.up(self.n2(x)).chunk(2, -1)
            return x + self.down(F.silu(gate) * up)

    class Decoder(nn.Module):
        def __init__(self, vocab=16384, d=2048, heads=16, ff=5632, layers=4):
            super().__init__()
            self.embed, self.norm = nn.Embedding(vocab, d), nn.RMSNorm(d)
            self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, input_ids):
            x = self.embed(input_ids)
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))
    return Decoder()

def build():
    if os.environ.get("MODEL") == "plain":
        return plain()
    import transformers
    cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=768, intermediate_size=2048,
                                   num_attention_heads=12, num_key_value_heads=4, vocab_size=16384,
                                   max_position_embeddings=1024)
    return transformers.LlamaForCausalLM(cfg)

class Logits:
    def __init__(self, logits):
        self.logits = logits

def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "run"
    shapes = [tuple(int(x) for x in s.split("x")) for s in os.environ.get("SHAPES", "1x96,4x200").split(",")]
    marks = {}  # seconds since START at each step of the start-up, before the first compiled call
    import torch
    marks["import_torch"] = round(time.time() - START, 2)
    from torch._dynamo.utils import counters
    torch.manual_seed(0)
    count_real_coordesc()
    marks["import_inductor"] = round(time.time() - START, 2)
    before = listing()
    torch.cuda.init()
    torch.empty(1, device="cuda")
    marks["cuda_context"] = round(time.time() - START, 2)
    with torch.device("cuda"):  # the weights start on the GPU, as a server's loaded checkpoint would
        model = build().to(torch.bfloat16).eval()
    torch.cuda.synchronize()
    marks["model"] = round(time.time() - START, 2)
    print(json.dumps({"label": label, "startup": marks}), file=sys.stderr, flush=True)
    if hasattr(model, "config"):
        model.config.use_cache = False
    compiled = torch.compile(model, mode=os.environ.get("MODE", "max-autotune"), dynamic=False)
    cmodel = compiled if hasattr(model, "config") else (lambda input_ids: Logits(compiled(input_ids)))
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
            for _ in range(max(1, int(os.environ["STEADY"]) // 10)):
                t0 = torch.cuda.Event(enable_timing=True)
                t1 = torch.cuda.Event(enable_timing=True)
                t0.record()
                for _ in range(10):
                    cmodel(input_ids=ids)
                t1.record()
                torch.cuda.synchronize()
                times.append(t0.elapsed_time(t1) / 10)
            times.sort()
            steady["%dx%d" % (b, n)] = round(times[len(times) // 2], 4)
    added = sorted(listing() - before)
    by_kind = {}
    for p in added:
        by_kind[kind(p)] = by_kind.get(kind(p), 0) + 1
    print(json.dumps({"label": label, "model": "serve", "first_answers_s": round(first_answers, 2),
                      "first_step_s": round(first_answers, 2), "startup": marks, "per_shape_s": per_shape, "steady_ms": steady, "answers": answers, "work": work_metrics(), "real": dict(REAL),
                      "counters": {k: dict(v) for k, v in counters.items()}, "added": by_kind,
                      "added_kernels": sorted({os.path.basename(p)[:-6] for p in added if p.endswith(".cubin")})}),
          flush=True)

if __name__ == "__main__":
    main()
