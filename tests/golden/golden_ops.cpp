// The op table of the golden replay: op name to Locus call.

#include "tests/golden/golden_ops.h"

#include <memory>

namespace locus::golden {

namespace {


std::vector<Tensor> run_optimizer(const Ctx& c, const std::string& kind) {
  std::vector<Tensor> params;
  for (size_t k = 0; k < 2; ++k) params.push_back(c.x(k).detach().requires_grad_());  // the input itself, in its layout
  std::unique_ptr<optim::Optimizer> opt;
  if (kind == "sgd") {
    optim::SGDOptions o;
    o.lr(c.f64("lr", o.lr()));
    o.momentum(c.f64("momentum", o.momentum()));
    o.dampening(c.f64("dampening", o.dampening()));
    o.weight_decay(c.f64("weight_decay", o.weight_decay()));
    o.nesterov(c.flag("nesterov"));
    opt = std::make_unique<optim::SGD>(params, o);
  } else {
    optim::AdamOptions o = kind == "adamw" ? optim::AdamW::with_default_decay() : optim::AdamOptions();
    o.lr(c.f64("lr", o.lr()));
    o.beta1(c.f64("beta1", o.beta1()));
    o.beta2(c.f64("beta2", o.beta2()));
    o.eps(c.f64("eps", o.eps()));
    o.weight_decay(c.f64("weight_decay", o.weight_decay()));
    if (kind == "adamw")
      opt = std::make_unique<optim::AdamW>(params, o);
    else
      opt = std::make_unique<optim::Adam>(params, o);
  }
  Outs outs;
  const size_t steps = (c.in.size() - 2) / 2;
  for (size_t s = 0; s < steps; ++s) {
    for (size_t k = 0; k < 2; ++k) params[k].set_grad(c.x(2 + 2 * s + k));
    opt->step();
    for (const Tensor& p : params) outs.push_back(p.detach().clone());
  }
  return outs;
}

#define LOCUS_GOLDEN_BINARY(NAME)                                                                                     \
  {                                                                                                                   \
#NAME,                                                                                                            \
        [](const Ctx& c)                                                                                              \
             -> Outs { return {c.has("other") ? locus::NAME(c.x(0), c.num("other")) : locus::NAME(c.x(0), c.x(1))}; } \
  }
#define LOCUS_GOLDEN_UNARY(NAME)                                      \
  {                                                                   \
#NAME, [](const Ctx& c) -> Outs { return {locus::NAME(c.x(0))}; } \
  }

}  // namespace

namespace {
std::map<std::string, OpFn> builtin_ops();

// The registered calls; a function-local static, so registrars of any file may run first.
std::map<std::string, OpFn>& registered() {
  static std::map<std::string, OpFn> calls;
  return calls;
}
}  // namespace

OpRegistrar::OpRegistrar(std::initializer_list<std::pair<const std::string, OpFn>> calls) {
  for (const auto& call : calls)
    if (!registered().insert(call).second) throw std::logic_error("golden op '" + call.first + "' registered twice");
}

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> table = [] {
    std::map<std::string, OpFn> all = builtin_ops();
    for (const auto& call : registered())
      if (!all.insert(call).second) throw std::logic_error("golden op '" + call.first + "' registered twice");
    return all;
  }();
  return table;
}

namespace {
std::map<std::string, OpFn> builtin_ops() {
  return {
      // elementwise
      {"add",
       [](const Ctx& c) -> Outs {
         if (c.has("other")) return {add(c.x(0), c.num("other"))};
         return {c.has("alpha") ? add(c.x(0), c.x(1), c.num("alpha")) : add(c.x(0), c.x(1))};
       }},
      {"sub",
       [](const Ctx& c) -> Outs {
         if (c.has("other")) return {sub(c.x(0), c.num("other"))};
         return {c.has("alpha") ? sub(c.x(0), c.x(1), c.num("alpha")) : sub(c.x(0), c.x(1))};
       }},
      {"div",
       [](const Ctx& c) -> Outs {
         if (c.has("other"))
           return {c.has("rounding") ? div(c.x(0), c.num("other"), c.rounding()) : div(c.x(0), c.num("other"))};
         return {c.has("rounding") ? div(c.x(0), c.x(1), c.rounding()) : div(c.x(0), c.x(1))};
       }},
      LOCUS_GOLDEN_BINARY(mul),
      LOCUS_GOLDEN_BINARY(floor_divide),
      LOCUS_GOLDEN_BINARY(remainder),
      LOCUS_GOLDEN_BINARY(fmod),
      LOCUS_GOLDEN_BINARY(pow),
      LOCUS_GOLDEN_BINARY(maximum),
      LOCUS_GOLDEN_BINARY(minimum),
      LOCUS_GOLDEN_BINARY(eq),
      LOCUS_GOLDEN_BINARY(ne),
      LOCUS_GOLDEN_BINARY(lt),
      LOCUS_GOLDEN_BINARY(le),
      LOCUS_GOLDEN_BINARY(gt),
      LOCUS_GOLDEN_BINARY(ge),
      LOCUS_GOLDEN_BINARY(logical_and),
      LOCUS_GOLDEN_BINARY(logical_or),
      LOCUS_GOLDEN_BINARY(logical_xor),
      {"rsub", [](const Ctx& c) -> Outs { return {c.num("other") - c.x(0)}; }},
      {"rdiv", [](const Ctx& c) -> Outs { return {c.num("other") / c.x(0)}; }},
      {"radd", [](const Ctx& c) -> Outs { return {c.num("other") + c.x(0)}; }},
      {"rmul", [](const Ctx& c) -> Outs { return {c.num("other") * c.x(0)}; }},
      {"mul_self", [](const Ctx& c) -> Outs { return {mul(c.x(0), c.x(0))}; }},
      // in place, on a copy of the left operand
      {"add_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.add_(c.num("other"));
         else
           a.add_(c.x(1));
         return {a};
       }},
      {"sub_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.sub_(c.num("other"));
         else
           a.sub_(c.x(1));
         return {a};
       }},
      {"mul_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.mul_(c.num("other"));
         else
           a.mul_(c.x(1));
         return {a};
       }},
      {"div_",
       [](const Ctx& c) -> Outs {
         Tensor a = c.x(0).clone();
         if (c.has("other"))
           a.div_(c.num("other"));
         else
           a.div_(c.x(1));
         return {a};
       }},
      LOCUS_GOLDEN_UNARY(neg),
      LOCUS_GOLDEN_UNARY(abs),
      LOCUS_GOLDEN_UNARY(sign),
      LOCUS_GOLDEN_UNARY(exp),
      LOCUS_GOLDEN_UNARY(expm1),
      LOCUS_GOLDEN_UNARY(log),
      LOCUS_GOLDEN_UNARY(log1p),
      LOCUS_GOLDEN_UNARY(sqrt),
      LOCUS_GOLDEN_UNARY(rsqrt),
      LOCUS_GOLDEN_UNARY(sin),
      LOCUS_GOLDEN_UNARY(cos),
      LOCUS_GOLDEN_UNARY(tanh),
      LOCUS_GOLDEN_UNARY(sigmoid),
      LOCUS_GOLDEN_UNARY(erf),
      LOCUS_GOLDEN_UNARY(relu),
      LOCUS_GOLDEN_UNARY(gelu),
      LOCUS_GOLDEN_UNARY(floor),
      LOCUS_GOLDEN_UNARY(ceil),
      LOCUS_GOLDEN_UNARY(round),
      LOCUS_GOLDEN_UNARY(trunc),
      LOCUS_GOLDEN_UNARY(logical_not),
      {"clamp", [](const Ctx& c) -> Outs { return {clamp(c.x(0), c.opt_num("min"), c.opt_num("max"))}; }},
      {"where", [](const Ctx& c) -> Outs { return {where(c.x(0), c.x(1), c.x(2))}; }},
      // reductions
      {"sum",
       [](const Ctx& c) -> Outs {
         const bool keep = c.flag("keepdim");
         if (c.has("dims")) return {sum(c.x(0), c.list("dims"), keep, c.dtype())};
         if (c.has("dim")) return {sum(c.x(0), c.i64("dim"), keep, c.dtype())};
         return {sum(c.x(0), c.dtype())};
       }},
      {"mean",
       [](const Ctx& c) -> Outs {
         const bool keep = c.flag("keepdim");
         if (c.has("dims")) return {mean(c.x(0), c.list("dims"), keep)};
         if (c.has("dim")) return {mean(c.x(0), c.i64("dim"), keep)};
         return {mean(c.x(0))};
       }},
      {"max",
       [](const Ctx& c) -> Outs {
         if (!c.has("dim")) return {max(c.x(0))};
         auto [v, i] = max(c.x(0), c.i64("dim"), c.flag("keepdim"));
         return {v, i};
       }},
      {"min",
       [](const Ctx& c) -> Outs {
         if (!c.has("dim")) return {min(c.x(0))};
         auto [v, i] = min(c.x(0), c.i64("dim"), c.flag("keepdim"));
         return {v, i};
       }},
      {"argmax",
       [](const Ctx& c) -> Outs {
         return {c.has("dim") ? argmax(c.x(0), c.i64("dim"), c.flag("keepdim")) : argmax(c.x(0))};
       }},
      {"argmin",
       [](const Ctx& c) -> Outs {
         return {c.has("dim") ? argmin(c.x(0), c.i64("dim"), c.flag("keepdim")) : argmin(c.x(0))};
       }},
      {"softmax", [](const Ctx& c) -> Outs { return {softmax(c.x(0), c.i64("dim"))}; }},
      {"log_softmax", [](const Ctx& c) -> Outs { return {log_softmax(c.x(0), c.i64("dim"))}; }},
      // products, joins, indexing
      {"matmul", [](const Ctx& c) -> Outs { return {matmul(c.x(0), c.x(1))}; }},
      {"mm", [](const Ctx& c) -> Outs { return {mm(c.x(0), c.x(1))}; }},
      {"cat", [](const Ctx& c) -> Outs { return {cat(c.in, c.i64("dim"))}; }},
      {"stack", [](const Ctx& c) -> Outs { return {stack(c.in, c.i64("dim"))}; }},
      {"index_select", [](const Ctx& c) -> Outs { return {index_select(c.x(0), c.i64("dim"), c.x(1))}; }},
      {"gather", [](const Ctx& c) -> Outs { return {gather(c.x(0), c.i64("dim"), c.x(1))}; }},
      // views and copies
      {"reshape", [](const Ctx& c) -> Outs { return {c.x(0).reshape(c.list("shape"))}; }},
      {"view", [](const Ctx& c) -> Outs { return {c.x(0).view(c.list("shape"))}; }},
      {"flatten", [](const Ctx& c) -> Outs { return {c.x(0).flatten(c.i64("start", 0), c.i64("end", -1))}; }},
      {"permute", [](const Ctx& c) -> Outs { return {c.x(0).permute(c.list("dims"))}; }},
      {"transpose", [](const Ctx& c) -> Outs { return {c.x(0).transpose(c.i64("d0"), c.i64("d1"))}; }},
      {"t", [](const Ctx& c) -> Outs { return {c.x(0).t()}; }},
      {"squeeze",
       [](const Ctx& c) -> Outs { return {c.has("dim") ? c.x(0).squeeze(c.i64("dim")) : c.x(0).squeeze()}; }},
      {"unsqueeze", [](const Ctx& c) -> Outs { return {c.x(0).unsqueeze(c.i64("dim"))}; }},
      {"narrow", [](const Ctx& c) -> Outs { return {c.x(0).narrow(c.i64("dim"), c.i64("start"), c.i64("length"))}; }},
      {"select", [](const Ctx& c) -> Outs { return {c.x(0).select(c.i64("dim"), c.i64("index"))}; }},
      {"expand", [](const Ctx& c) -> Outs { return {c.x(0).expand(c.list("shape"))}; }},
      {"slice",
       [](const Ctx& c) -> Outs {
         std::optional<int64_t> start, stop;
         if (c.has("start")) start = c.i64("start");
         if (c.has("stop")) stop = c.i64("stop");
         return {c.x(0).slice(c.i64("dim"), start, stop, c.i64("step", 1))};
       }},
      {"contiguous", [](const Ctx& c) -> Outs { return {c.x(0).contiguous()}; }},
      {"clone", [](const Ctx& c) -> Outs { return {c.x(0).clone()}; }},
      {"to", [](const Ctx& c) -> Outs { return {c.x(0).to(*c.dtype())}; }},
      // factories
      {"arange",
       [](const Ctx& c) -> Outs {
         if (!c.has("start")) return {arange(c.num("end"), c.options())};
         return {arange(c.num("start"), c.num("end"), c.has("step") ? c.num("step") : Scalar(1), c.options())};
       }},
      {"full", [](const Ctx& c) -> Outs { return {full(c.list("shape"), c.num("value"), c.options())}; }},
      {"eye",
       [](const Ctx& c) -> Outs {
         std::optional<int64_t> m;
         if (c.has("m")) m = c.i64("m");
         return {eye(c.i64("n"), m, c.options())};
       }},
      {"linspace",
       [](const Ctx& c) -> Outs { return {linspace(c.f64("start"), c.f64("end"), c.i64("steps"), c.options())}; }},
      {"zeros", [](const Ctx& c) -> Outs { return {zeros(c.list("shape"), c.options())}; }},
      {"ones", [](const Ctx& c) -> Outs { return {ones(c.list("shape"), c.options())}; }},
      // losses
      {"mse_loss", [](const Ctx& c) -> Outs { return {locus::mse_loss(c.x(0), c.x(1), c.reduction())}; }},
      {"nll_loss",
       [](const Ctx& c) -> Outs {
         return {nn::functional::nll_loss(c.x(0), c.x(1), nn::ClassLossOptions{c.reduction(), c.i64("ignore_index", -100)})};
       }},
      {"cross_entropy",
       [](const Ctx& c) -> Outs {
         return {nn::functional::cross_entropy(c.x(0), c.x(1), nn::ClassLossOptions{c.reduction(), c.i64("ignore_index", -100)})};
       }},
      // optimizers: the parameters after each step
      {"sgd", [](const Ctx& c) -> Outs { return run_optimizer(c, "sgd"); }},
      {"adam", [](const Ctx& c) -> Outs { return run_optimizer(c, "adam"); }},
      {"adamw", [](const Ctx& c) -> Outs { return run_optimizer(c, "adamw"); }},
  };
}
}  // namespace

#undef LOCUS_GOLDEN_BINARY
#undef LOCUS_GOLDEN_UNARY

}  // namespace locus::golden
