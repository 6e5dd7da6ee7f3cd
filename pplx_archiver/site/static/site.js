// pplx-archiver static site: sorting, filtering, search and query highlighting.
// Loaded from the site's own folder (the pages' Content-Security-Policy allows nothing else).
"use strict";
(function () {
  var CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af";
  var TOKEN = new RegExp("[" + CJK + "]+|[^\\s\\p{P}\\p{S}\\p{C}_" + CJK + "]+", "gu");
  var CJK_RUN = new RegExp("^[" + CJK + "]+$", "u");

  // The folding of the index (offline_search.tokens): NFKC (full-width ＡＩ is AI), traditional
  // Chinese characters to simplified (the table OpenCC's files give, in fold.js as two
  // strings of characters: each character, and what it folds to), lower case.
  var foldMap = null, unfoldMap = null;
  function tables() {
    if (foldMap !== null) return;
    foldMap = new Map();
    unfoldMap = new Map();
    function unfold(folded, form) {
      if (!unfoldMap.has(folded)) unfoldMap.set(folded, []);
      unfoldMap.get(folded).push(form);
    }
    // The half- and full-width forms block: each form that NFKC makes one character.
    for (var code = 0xff01; code <= 0xffee; code++) {
      var form = String.fromCharCode(code), plain = form.normalize("NFKC").toLowerCase();
      if (plain !== form && Array.from(plain).length === 1) unfold(plain, form);
    }
    var table = window.PPLX_FOLD;
    if (!table) return;
    var from = Array.from(table[0]), to = Array.from(table[1]);
    for (var i = 0; i < from.length && i < to.length; i++) {
      foldMap.set(from[i], to[i]);
      unfold(to[i], from[i]);
    }
  }
  function fold(q) {
    tables();
    return Array.from(q.normalize("NFKC")).map(function (c) {
      return foldMap.has(c) ? foldMap.get(c) : c;
    }).join("").toLowerCase();
  }

  // A folded character as a regular-expression class of every form that folds to it:
  // itself, its traditional and variant forms, its full- or half-width forms (case: the
  // "i" flag).
  function variants(c) {
    tables();
    var forms = [c].concat(unfoldMap.get(c) || []);
    return "[" + forms.map(function (f) { return f.replace(/[\\\]\[^-]/g, "\\$&"); }).join("") + "]";
  }

  // Query terms, as the index builder splits text: words, and CJK runs as bigrams
  // (a single CJK character stays a unigram).
  function queryTerms(q) {
    var out = [];
    var runs = fold(q).match(TOKEN) || [];
    runs.forEach(function (run) {
      if (CJK_RUN.test(run)) {
        var chars = Array.from(run);
        if (chars.length === 1) { out.push(run); return; }
        for (var i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
      } else {
        out.push(run);
      }
    });
    return out;
  }

  function intersect(a, b) {
    var out = [], i = 0, j = 0;
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) { out.push(a[i]); i++; j++; }
      else if (a[i] < b[j]) i++; else j++;
    }
    return out;
  }

  // The search index in shards (offline_search.search_files): search-index.js gives their
  // counts, search/t<k>.js holds the terms of shard k (each with its delta-coded doc numbers)
  // and search/d<k>.js a run of docs. A shard is a script calling PPLX_SEARCH_PART, loaded
  // the first time a query needs it (a page may not fetch JSON from file://).
  var parts = { t: {}, d: {} }, loading = {};
  var has = Object.prototype.hasOwnProperty;
  window.PPLX_SEARCH_PART = function (kind, number, data) {
    if (has.call(parts, kind)) parts[kind][number] = data;
  };
  function load(kind, number) {
    if (has.call(parts[kind], number)) return Promise.resolve(parts[kind][number]);
    var key = kind + number;
    if (!loading[key]) {
      loading[key] = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = "search/" + key + ".js";
        script.onload = function () {
          if (has.call(parts[kind], number)) resolve(parts[kind][number]);
          else { delete loading[key]; reject(new Error(script.src)); }
        };
        script.onerror = function () { delete loading[key]; reject(new Error(script.src)); };
        document.head.appendChild(script);
      });
    }
    return loading[key];
  }

  // The term shard of a term: 32-bit FNV-1a of its first three characters (code points),
  // as offline_search.shard_of computes it.
  function shardOf(term, shards) {
    var h = 0x811c9dc5;
    Array.from(term).slice(0, 3).forEach(function (c) {
      h = Math.imul(h ^ c.codePointAt(0), 0x01000193) >>> 0;
    });
    return h % shards;
  }

  function decode(deltas) {
    var out = new Array(deltas.length), n = 0;
    for (var i = 0; i < deltas.length; i++) { n += deltas[i]; out[i] = n; }
    return out;
  }

  // Docs holding a term; a word of 3+ letters also matches the words it begins (they share
  // its first three characters, so they sit in its shard).
  function postings(shard, term) {
    var exact = has.call(shard, term) ? decode(shard[term]) : [];
    if (CJK_RUN.test(term) || Array.from(term).length < 3) return exact;
    var found = new Set(exact);
    Object.keys(shard).forEach(function (key) {
      if (key.length > term.length && key.lastIndexOf(term, 0) === 0) {
        decode(shard[key]).forEach(function (d) { found.add(d); });
      }
    });
    return Array.from(found).sort(function (a, b) { return a - b; });
  }

  var SHOWN = 200;

  // The first SHOWN docs matching every term of q, as [page, turn, title, snippet].
  function search(q) {
    var index = window.PPLX_SEARCH;
    var terms = queryTerms(q);
    if (!index || !index.term_shards || !terms.length) return Promise.resolve([]);
    var wanted = terms.map(function (t) { return load("t", shardOf(t, index.term_shards)); });
    return Promise.all(wanted).then(function (shards) {
      var hits = null;
      for (var k = 0; k < terms.length; k++) {
        var posting = postings(shards[k], terms[k]);
        hits = hits === null ? posting : intersect(hits, posting);
        if (!hits.length) break;
      }
      hits = (hits || []).slice(0, SHOWN);
      var size = index.doc_shard;
      var runs = Array.from(new Set(hits.map(function (d) { return Math.floor(d / size); })));
      return Promise.all(runs.map(function (n) { return load("d", n); })).then(function () {
        return hits.map(function (d) { return parts.d[Math.floor(d / size)][d % size]; });
      });
    });
  }

  function text(el, value) { el.textContent = value; return el; }

  function setupSearch() {
    var box = document.getElementById("search");
    var list = document.getElementById("results");
    if (!box || !list) return;
    var latest = 0;
    function show(q, items) {
      list.replaceChildren();
      items.forEach(function (item) { list.appendChild(item); });
      list.hidden = !q;
      list.dataset.done = q;  // the query whose results are shown
    }
    box.addEventListener("input", function () {
      var q = box.value.trim();
      var ticket = ++latest;
      if (!q) { show("", []); return; }
      search(q).then(function (found) {
        if (ticket !== latest) return;
        if (!found.length) {
          show(q, [text(document.createElement("li"), "No match.")]);
          return;
        }
        show(q, found.map(function (doc) {
          var li = document.createElement("li");
          var a = document.createElement("a");
          a.href = doc[0] + "?q=" + encodeURIComponent(q) + "#turn-" + doc[1];
          a.className = "hit";
          text(a, (doc[2] || "(untitled)") + " — turn " + doc[1]);
          li.appendChild(a);
          li.appendChild(text(document.createElement("div"), doc[3]));
          return li;
        }));
      }, function (error) {
        if (ticket !== latest) return;
        var note = "Part of the search data is missing (" + error.message + "): build the site again.";
        show(q, [text(document.createElement("li"), note)]);
      });
    });
  }

  // A row's text folded as a query is (once per row).
  var foldedRows = new WeakMap();
  function folded(row) {
    if (!foldedRows.has(row)) foldedRows.set(row, fold(row.textContent));
    return foldedRows.get(row);
  }

  function setupTable() {
    var table = document.getElementById("threads");
    if (!table) return;
    var body = table.tBodies[0];
    var rows = Array.from(body.rows);
    var filter = document.getElementById("filter");
    var mode = document.getElementById("mode");
    var flag = document.getElementById("flag");
    var count = document.getElementById("count");
    function apply() {
      var f = filter ? fold(filter.value.trim()) : "";
      var m = mode ? mode.value : "";
      var g = flag ? flag.value : "";
      var shown = 0;
      rows.forEach(function (row) {
        var ok = (!m || row.dataset.mode === m) &&
          (!g || (" " + row.dataset.flags + " ").indexOf(" " + g + " ") >= 0) &&
          (!f || folded(row).indexOf(f) >= 0);
        row.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = shown + " shown";
    }
    [filter, mode, flag].forEach(function (el) {
      if (el) { el.addEventListener("input", apply); el.addEventListener("change", apply); }
    });
    Array.from(table.tHead.rows[0].cells).forEach(function (th, col) {
      th.tabIndex = 0;
      th.addEventListener("click", function () {
        var asc = th.dataset.dir !== "asc";
        Array.from(table.tHead.rows[0].cells).forEach(function (c) { delete c.dataset.dir; });
        th.dataset.dir = asc ? "asc" : "desc";
        rows.sort(function (a, b) {
          var x = a.cells[col].dataset.sort || a.cells[col].textContent;
          var y = b.cells[col].dataset.sort || b.cells[col].textContent;
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
    apply();
  }

  // Thread pages: mark the words of ?q= and open the folds holding them.
  function highlight() {
    var q = new URLSearchParams(location.search).get("q");
    var main = document.querySelector("main");
    if (!q || !main) return;
    var words = (fold(q).match(TOKEN) || []).map(function (w) {
      return Array.from(w).map(variants).join("");
    });
    if (!words.length) return;
    var re = new RegExp(words.join("|"), "giu");
    var walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    var first = null;
    nodes.forEach(function (node) {
      var value = node.nodeValue;
      re.lastIndex = 0;
      if (!re.test(value)) return;
      re.lastIndex = 0;
      var frag = document.createDocumentFragment(), last = 0, m;
      while ((m = re.exec(value)) !== null) {
        if (!m[0]) { re.lastIndex++; continue; }
        frag.appendChild(document.createTextNode(value.slice(last, m.index)));
        var mark = text(document.createElement("mark"), m[0]);
        frag.appendChild(mark);
        if (!first) first = mark;
        last = m.index + m[0].length;
      }
      frag.appendChild(document.createTextNode(value.slice(last)));
      node.parentNode.replaceChild(frag, node);
    });
    document.querySelectorAll("mark").forEach(function (mark) {
      for (var el = mark.parentElement; el; el = el.parentElement) {
        if (el.tagName === "DETAILS") el.open = true;
      }
    });
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    (target || first || main).scrollIntoView();
  }

  // insights-list.html?k=KEY: the threads behind a bar, cell or row of insights.html.
  function setupInsightList() {
    var list = document.getElementById("insight-list");
    var data = window.PPLX_INSIGHTS;
    if (!list || !data) return;
    var key = new URLSearchParams(location.search).get("k") || "";
    var numbers = Object.prototype.hasOwnProperty.call(data.lists, key) ? data.lists[key] : [];
    var title = Object.prototype.hasOwnProperty.call(data.titles, key) ? data.titles[key] : key;
    text(document.getElementById("list-title"), title || "Threads");
    document.title = (title || "Threads") + " · Insights";
    text(document.getElementById("list-count"), numbers.length + " threads");
    numbers.slice().reverse().forEach(function (n) {
      var t = data.threads[n];
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = t[0];
      text(a, t[1] || "(untitled)");
      li.appendChild(a);
      li.appendChild(document.createTextNode(" — " + t[2] + " · " + t[3]));
      list.appendChild(li);
    });
  }

  setupSearch();
  setupTable();
  setupInsightList();
  highlight();
})();
