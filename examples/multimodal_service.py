#!/usr/bin/python3
"""A small LLaVA-like model trained on CPU from Tessera's data service (issue 35).

    PYTHONPATH=build/python python3 examples/multimodal_service.py --samples 96 --workers 2

What it shows, in one file:
  * `tessera data-serve synth` writes a synthetic image + text set (JPEG / PNG images, text files,
    a SentencePiece tokenizer trained on the texts, the index with each sample's token counts);
  * `tessera data-serve coordinator` plans the epoch over --ranks trainer ranks with the balancer
    (each micro-batch under --max-tokens), `tessera data-serve worker` processes decode, resize,
    patchify and tokenize, and the trainer never touches a JPEG;
  * each rank trains from tessera.data.ServiceDataset in a torch DataLoader: the model embeds each
    image's 14 x 14 x 3 patches with a linear layer (a ViT's patch embedding, LLaVA's projector
    folded in), the text tokens with an embedding table, runs them through a causal transformer
    as one packed sequence per micro-batch (documents are not masked from each other: a
    simplification), and predicts each text token from what precedes it.
The ranks here are threads of one process, each with its own model (no gradient exchange): what is
shown is the data path. Every sample is trained on exactly once per epoch; the script checks it.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import torch

import tessera.data as td

BINARY = Path(__file__).resolve().parents[1] / "build" / "bin" / "tessera"
PATCH = 14
RESIZE = "fixed:112"  # 8 x 8 patches an image: small, for a CPU
VOCAB = 300  # the tokenizer's at most (fewer pieces when the corpus has fewer)


class TinyLlava(torch.nn.Module):
    def __init__(self, vocab: int, width: int = 64, layers: int = 2, heads: int = 4):
        super().__init__()
        self.patch_embed = torch.nn.Linear(PATCH * PATCH * 3, width)
        self.token_embed = torch.nn.Embedding(vocab, width)
        block = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(block, layers)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, batch):
        """The packed sequence (each sample's image patches, then its text) and the loss over text."""
        pieces, targets = [], []
        text = torch.split(batch["token_ids"], batch["text_lengths"].tolist())
        images = {int(s): img for s, img in zip(batch["image_sample"], batch["images"])}
        for i, tokens in enumerate(text):
            if i in images:
                pieces.append(self.patch_embed(images[i].float() / 255.0))
                targets.append(torch.full((images[i].shape[0],), -100))
            pieces.append(self.token_embed(tokens))
            targets.append(torch.cat([tokens[1:], torch.tensor([-100])]))  # next token within the text
        x = torch.cat(pieces).unsqueeze(0)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        logits = self.head(self.blocks(x, mask=causal)).squeeze(0)
        return torch.nn.functional.cross_entropy(logits, torch.cat(targets), ignore_index=-100)


def train_rank(address: str, rank: int, vocab: int, report: dict) -> None:
    torch.manual_seed(rank)
    model = TinyLlava(vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loader = torch.utils.data.DataLoader(td.ServiceDataset(address, rank=rank), batch_size=None, num_workers=0)
    losses, seen = [], []
    for batch in loader:
        if len(batch["sample_ids"]) == 0:  # a slot the last step left empty
            continue
        loss = model(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        seen += batch["sample_ids"].tolist()
    report[rank] = (losses, seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=96)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--binary", default=str(BINARY))
    args = parser.parse_args()
    torch.set_num_threads(1)
    processes = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "set"
            subprocess.run([args.binary, "data-serve", "synth", "--out", str(folder), "--samples", str(args.samples),
                            "--vocab", str(VOCAB), "--resize", RESIZE, "--patch", str(PATCH)], check=True, capture_output=True)
            coordinator = subprocess.Popen(
                [args.binary, "data-serve", "coordinator", "--index", str(folder / "index.jsonl"), "--ranks",
                 str(args.ranks), "--microbatches", "2", "--max-tokens", str(args.max_tokens), "--tokenizer",
                 str(folder / "tokenizer.model"), "--resize", RESIZE, "--patch", str(PATCH)],
                stdout=subprocess.PIPE, text=True)
            processes.append(coordinator)
            address = re.match(r"listening on (\S+)", coordinator.stdout.readline()).group(1)
            for i in range(args.workers):
                processes.append(subprocess.Popen([args.binary, "data-serve", "worker", "--coordinator", address,
                                                   "--name", f"w{i}"], stdout=subprocess.DEVNULL))
            report = {}
            threads = [threading.Thread(target=train_rank, args=(address, r, VOCAB, report)) for r in range(args.ranks)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert coordinator.wait(timeout=60) == 0
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
            p.wait()
    seen = sorted(s for losses, ids in report.values() for s in ids)
    for rank, (losses, ids) in sorted(report.items()):
        print(f"rank {rank}: {len(losses)} micro-batches, {len(ids)} samples, loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    exactly_once = seen == list(range(args.samples))
    print(f"every sample trained on exactly once: {exactly_once}")
    return 0 if exactly_once else 1


if __name__ == "__main__":
    sys.exit(main())
