// Exact parameter counts of a ModelSpec, split by where the parameters live, so the memory model
// can place them on pipeline stages and the FLOP model can count GEMM weights.
#pragma once

#include "model/model_spec.h"

namespace tessera {

struct ParameterCount {
  double embedding = 0;          // token embedding, learned positions, embedding norm
  double output_head = 0;        // untied LM head (0 when tied)
  double final_norm = 0;
  double attention_per_layer = 0;  // projections, biases, sinks
  double norms_per_layer = 0;      // the two per-block norms
  double dense_mlp_per_layer = 0;  // a dense MLP block (0 when every layer is MoE)
  double moe_mlp_per_layer = 0;    // router + all routed experts + shared experts
  double moe_active_mlp_per_layer = 0;  // router + top_k routed + shared experts
  double dense_layers = 0;  // layers with a dense MLP
  double moe_layers = 0;    // layers with an MoE MLP
  // Multi-token-prediction modules, all of them (DeepSeek-V3 §2.2): per module the embedding and
  // hidden-state norms, the 2h -> h projection, one transformer layer of the last layer's kind and
  // its final norm. The embedding and output head are shared with the main model and not counted
  // again. Megatron-Core places them on the last pipeline stage.
  double mtp = 0;
  double mtp_active = 0;  // the same with only the routed top_k experts of an MoE layer
  // The LM head's vocab x hidden matrix, whether stored (output_head) or tied to the embedding.
  double unembedding = 0;

  double transformer_layers() const {
    return dense_layers * (attention_per_layer + norms_per_layer + dense_mlp_per_layer) +
           moe_layers * (attention_per_layer + norms_per_layer + moe_mlp_per_layer);
  }
  double total() const { return embedding + output_head + final_norm + transformer_layers() + mtp; }
  // Parameters that touch one token (MoE: only the routed top_k experts), MTP modules included.
  double active() const {
    return total() - moe_layers * (moe_mlp_per_layer - moe_active_mlp_per_layer) - (mtp - mtp_active);
  }
  // The main model alone, as papers quote it (DeepSeek-V3's 671B leaves out its 14B MTP module).
  double main_total() const { return total() - mtp; }
  double main_active() const { return active() - mtp_active; }
  // Active parameters without the input embedding (token table, learned positions, embedding
  // norm) but with the unembedding, even when it is tied: the convention of the gpt-oss model
  // card (arXiv 2508.10925, Table 1: "Unembedding parameters are counted towards active, but not
  // embeddings"). MTP modules included, as in active().
  double active_without_embedding() const {
    return active() - embedding - output_head + unembedding;
  }
};

ParameterCount count_parameters(const ModelSpec& model);

// Weights of the GEMMs one token passes through in one layer (no biases, norms or embeddings):
// the N_gemm of the Megatron-Core FLOP formula, per layer.
struct LayerGemmWeights {
  double attention = 0;  // Q, K, V, O projections (MLA: its down/up projections)
  double mlp = 0;        // active MLP weights (MoE: router + top_k + shared experts)
};
LayerGemmWeights dense_layer_gemm_weights(const ModelSpec& model);
LayerGemmWeights moe_layer_gemm_weights(const ModelSpec& model);

}  // namespace tessera
