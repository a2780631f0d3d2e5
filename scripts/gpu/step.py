# One training step of a small transformer under torch.compile; prints compile time of the first step and the
# Inductor cache counters. Run once cold, then warm after ccpack restore.
import os, sys, time, json
import torch
from torch._dynamo.utils import counters
torch.manual_seed(0)
d, seq, batch = 1024, 1024, 8
class Block(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1 = torch.nn.LayerNorm(d); s.att = torch.nn.MultiheadAttention(d, 16, batch_first=True)
        s.ln2 = torch.nn.LayerNorm(d); s.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))
    def forward(s, x):
        h = s.ln1(x); x = x + s.att(h, h, h, need_weights=False)[0]
        return x + s.mlp(s.ln2(x))
model = torch.nn.Sequential(Block(), Block()).cuda().to(torch.bfloat16)
for p in model.parameters(): p.requires_grad_(False)
adapter = torch.nn.Linear(d, d).cuda()
opt = torch.optim.SGD(adapter.parameters(), lr=1e-3)
def step(x):
    y = model(x).float()
    return adapter(y).square().mean()
cstep = torch.compile(step, mode=os.environ.get("MODE", "max-autotune-no-cudagraphs"))
x = torch.randn(batch, seq, d, device="cuda", dtype=torch.bfloat16)
t0 = time.time(); loss = cstep(x); loss.backward(); torch.cuda.synchronize(); first = time.time() - t0
t0 = time.time(); loss = cstep(x); loss.backward(); torch.cuda.synchronize(); second = time.time() - t0
ind = {k: v for k, v in counters["inductor"].items() if "cache" in k or "autotune" in k}
print(json.dumps({"label": sys.argv[1], "first_step_s": round(first, 2), "second_step_s": round(second, 3),
                  "loss": float(loss), "inductor_counters": ind}), flush=True)
