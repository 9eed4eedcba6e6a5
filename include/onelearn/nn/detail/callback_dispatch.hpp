#pragma once
// Callback dispatch of nn::Sequential::fit (the callback concept is described in
// nn/callbacks.hpp). Every hook is optional and resolved at compile time: calling a hook a
// callback lacks compiles to nothing, so a list of callbacks without on_batch_end costs nothing
// per batch. CallbackList holds fit's callbacks (references) and calls one hook on each, in
// the order they were given.

#include <concepts>
#include <tuple>
#include <type_traits>

#include "onelearn/nn/callbacks.hpp"

namespace onelearn::nn::detail {

template <class C, class M>
concept has_on_train_begin = requires(C& c, M& m) {
  c.on_train_begin(m);
};
template <class C, class M>
concept has_on_epoch_begin = requires(C& c, M& m) {
  c.on_epoch_begin(m, 0);
};
template <class C, class M>
concept has_on_batch_end = requires(C& c, M& m, const Logs& l) {
  c.on_batch_end(m, 0, l);
};
template <class C, class M>
concept has_on_epoch_end = requires(C& c, M& m, const Logs& l) {
  c.on_epoch_end(m, 0, l);
};
template <class C, class M>
concept has_on_train_end = requires(C& c, M& m, const Logs& l) {
  c.on_train_end(m, l);
};
template <class C, class M>
concept epoch_end_callable = std::invocable<C&, M&, int, const Logs&>;

template <class C, class M>
concept Callback = has_on_train_begin<C, M> || has_on_epoch_begin<C, M> || has_on_batch_end<C, M> ||
    has_on_epoch_end<C, M> || has_on_train_end<C, M> || epoch_end_callable<C, M>;

template <class C, class M>
void call_train_begin(C& c, M& model) {
  if constexpr (has_on_train_begin<C, M>) c.on_train_begin(model);
}
template <class C, class M>
void call_epoch_begin(C& c, M& model, int epoch) {
  if constexpr (has_on_epoch_begin<C, M>) c.on_epoch_begin(model, epoch);
}
template <class C, class M>
void call_batch_end(C& c, M& model, int batch, const Logs& logs) {
  if constexpr (has_on_batch_end<C, M>) c.on_batch_end(model, batch, logs);
}
template <class C, class M>
void call_epoch_end(C& c, M& model, int epoch, const Logs& logs) {
  if constexpr (has_on_epoch_end<C, M>) {
    c.on_epoch_end(model, epoch, logs);
  } else if constexpr (epoch_end_callable<C, M>) {
    c(model, epoch, logs);
  }
}
template <class C, class M>
void call_train_end(C& c, M& model, const Logs& logs) {
  if constexpr (has_on_train_end<C, M>) c.on_train_end(model, logs);
}

/// fit's callbacks for model type M, called hook by hook in the order given.
template <class M, class... Cs>
class CallbackList {
 public:
  explicit CallbackList(Cs&... callbacks) : callbacks_(callbacks...) {}

  /// Whether any callback has on_batch_end (else fit need not log its batches).
  static constexpr bool has_batch_hook = (has_on_batch_end<Cs, M> || ...);
  /// Whether any callback is of type C.
  template <class C>
  static constexpr bool holds = (std::is_same_v<std::remove_cv_t<Cs>, C> || ...);

  void train_begin(M& model) {
    std::apply([&](auto&... c) { (call_train_begin(c, model), ...); }, callbacks_);
  }
  void epoch_begin(M& model, int epoch) {
    std::apply([&](auto&... c) { (call_epoch_begin(c, model, epoch), ...); }, callbacks_);
  }
  void batch_end(M& model, int batch, const Logs& logs) {
    std::apply([&](auto&... c) { (call_batch_end(c, model, batch, logs), ...); }, callbacks_);
  }
  void epoch_end(M& model, int epoch, const Logs& logs) {
    std::apply([&](auto&... c) { (call_epoch_end(c, model, epoch, logs), ...); }, callbacks_);
  }
  void train_end(M& model, const Logs& logs) {
    std::apply([&](auto&... c) { (call_train_end(c, model, logs), ...); }, callbacks_);
  }

 private:
  std::tuple<Cs&...> callbacks_;
};

}  // namespace onelearn::nn::detail
