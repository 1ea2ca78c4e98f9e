// The chat page: a message box, the answers, and thumbs up / down under each
// answer that post `{ reward }` to the answer's signed feedback URL. The page
// holds no key: the URL's token allows exactly that, for that trajectory.
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chat (recorded)</title>
<link rel="icon" href="data:,">
<style>
  body { font: 16px/1.4 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
  #log { display: flex; flex-direction: column; gap: .75rem; margin-bottom: 1rem; }
  .user { align-self: flex-end; background: #e8f0fe; padding: .5rem .75rem; border-radius: .5rem; }
  .bot { background: #f3f3f3; padding: .5rem .75rem; border-radius: .5rem; }
  .bot button { margin-right: .25rem; }
  .status { color: #555; font-size: .85rem; margin-left: .5rem; }
  form { display: flex; gap: .5rem; }
  #message { flex: 1; padding: .5rem; }
</style>
</head>
<body>
<h1>Chat</h1>
<div id="log" aria-live="polite"></div>
<form id="chat">
  <input id="message" autocomplete="off" placeholder="Say something" aria-label="Message">
  <button id="send" type="submit">Send</button>
</form>
<script>
const session = "web-" + Math.random().toString(36).slice(2) + Date.now().toString(36);
const log = document.getElementById("log");
const input = document.getElementById("message");

function line(cls, text) {
  const div = document.createElement("div");
  div.className = cls;
  div.textContent = text;
  log.append(div);
  return div;
}

async function rate(answer, url, reward) {
  const status = answer.querySelector(".status");
  status.textContent = "sending...";
  try {
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reward }),
    });
    status.textContent = r.ok ? "thanks" : "not recorded (" + r.status + ")";
  } catch (error) {
    status.textContent = "not recorded (" + error.message + ")";
  }
}

document.getElementById("chat").addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = input.value.trim();
  if (!message) return;
  input.value = "";
  line("user", message);
  const r = await fetch("/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ session, message }),
  });
  const body = await r.json();
  if (!r.ok) {
    line("bot error", body.error ? body.error.message : "error " + r.status);
    return;
  }
  const answer = line("bot", body.answer);
  answer.dataset.trajectory = body.trajectory_id;
  const buttons = document.createElement("div");
  for (const [label, reward, cls] of [["\\u{1F44D}", 1, "up"], ["\\u{1F44E}", 0, "down"]]) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "thumb " + cls;
    b.textContent = label;
    b.setAttribute("aria-label", reward ? "Thumbs up" : "Thumbs down");
    b.addEventListener("click", () => rate(answer, body.feedback_url, reward));
    buttons.append(b);
  }
  const status = document.createElement("span");
  status.className = "status";
  buttons.append(status);
  answer.append(buttons);
});
</script>
</body>
</html>
`;
