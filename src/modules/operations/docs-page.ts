/** The interactive reference at /docs: Swagger UI over /openapi.json. With a docs handoff token in
 * the URL fragment (#token=...), the page asks for the document personalised for that company. */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Slotwise API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>body { margin: 0; } #company { font: 14px sans-serif; padding: 8px 16px; background: #eef6ee; display: none; }</style>
</head>
<body>
  <div id="company"></div>
  <div id="ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

export const DOCS_INIT_JS = `(function () {
  var key = 'slotwise-docs-token';
  var fromHash = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem(key, fromHash);
    history.replaceState(null, '', window.location.pathname);
  }
  var token = sessionStorage.getItem(key);
  SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#ui',
    deepLinking: true,
    requestInterceptor: function (req) {
      if (token && req.url.indexOf('/openapi.json') !== -1) req.headers['Authorization'] = 'Bearer ' + token;
      return req;
    },
    responseInterceptor: function (res) {
      if (res.url.indexOf('/openapi.json') !== -1 && res.ok && res.body && res.body['x-slotwise-company']) {
        var c = res.body['x-slotwise-company'];
        var el = document.getElementById('company');
        el.textContent = 'Personalised for ' + c.name + ' (company id ' + c.id + ', public client id ' + c.publicClientId + ')';
        el.style.display = 'block';
      }
      if (res.url.indexOf('/openapi.json') !== -1 && res.status === 401) sessionStorage.removeItem(key);
      return res;
    }
  });
})();
`;
