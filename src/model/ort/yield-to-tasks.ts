// Lets the event loop run the tasks waiting in its queue (input events, network and worker messages,
// timers: another request's preprocessing, the page's own UI) before the caller goes on.
//
// onnxruntime-web's WebAssembly build runs a graph synchronously on the calling thread (one thread, or the
// main thread driving its workers) and its run() resolves as a microtask, so a loop of model steps would
// never give the queue a turn: one request's decode would hold back every other request's admission (they
// went strictly one after another in bench:model's 16-at-once in Chromium) and the page's input events.
// A MessageChannel message is a new task at the back of the queue (setTimeout would be clamped to 4 ms
// after a few nested calls); Node has setImmediate (onnxruntime-node runs graphs on its own threads, so
// this costs it one turn of the loop).

export function yieldToTasks(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(undefined);
  });
}
