// Calls this app's backend through the gateway's proxy with the app token the gateway hands the
// page in ?app_token=. The page is sandboxed: no cookie reaches it. Answers are shown as text.
const appName = /^\/apps\/([^/]+)\//.exec(location.pathname)?.[1] ?? "__APP_NAME__";
const appToken = new URLSearchParams(location.search).get("app_token") ?? "";
const answer = document.getElementById("answer");

fetch(`/apps/${encodeURIComponent(appName)}/api/hello`, { headers: { authorization: `Bearer ${appToken}` } })
  .then((res) => res.json())
  .then((body) => (answer.textContent = `The backend says hello ${body.hello}.`))
  .catch((err) => (answer.textContent = String(err.message)));
