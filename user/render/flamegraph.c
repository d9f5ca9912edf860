// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sampled stacks as an interactive SVG flame graph, drawn here. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "render/callsites.h"
#include "render/flamegraph.h"
#include "util/escape.h"

#define FG_WIDTH 1200
#define FG_PAD 10
#define FG_FRAME 16
#define FG_MIN_WIDTH 0.1 /* pixels: narrower frames are left out */
#define FG_TOP 50	 /* title, buttons */
#define FG_BOTTOM 30	 /* the details line */

enum fg_kind { FGK_ROOT, FGK_COMM, FGK_FRAME, FGK_SYSCALL };

struct fg_node {
	char *name; /* raw */
	enum fg_kind kind;
	uint64_t count;
	struct fg_node *kids;
	size_t nkids, cap;
};

char *flamegraph_esc_xml(const char *s)
{
	char *u = esc_text(s, strlen(s)), *out, *q;

	if (!u)
		return NULL;
	out = malloc(strlen(u) * 6 + 1);
	if (out) {
		q = out;
		for (const char *p = u; *p; p++) {
			const char *ent = *p == '&'  ? "&amp;" :
					  *p == '<'  ? "&lt;" :
					  *p == '>'  ? "&gt;" :
					  *p == '"'  ? "&quot;" :
					  *p == '\'' ? "&#39;" :
						       NULL;

			if (ent) {
				strcpy(q, ent);
				q += strlen(ent);
			} else {
				*q++ = *p;
			}
		}
		*q = '\0';
	}
	free(u);
	return out;
}

static void node_free(struct fg_node *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
	free(n->name);
}

static struct fg_node *node_kid(struct fg_node *n, const char *name,
				enum fg_kind kind)
{
	struct fg_node *k;

	for (size_t i = 0; i < n->nkids; i++)
		if (n->kids[i].kind == kind && !strcmp(n->kids[i].name, name))
			return &n->kids[i];
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4;

		k = realloc(n->kids, cap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		n->cap = cap;
	}
	k = &n->kids[n->nkids];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	if (!k->name)
		return NULL;
	k->kind = kind;
	n->nkids++;
	return k;
}

static int tree_add(struct fg_node *root, const struct sc_stack *st)
{
	char buf[96], nbuf[SC_NAME_LEN], comm[SC_COMM_LEN];
	struct fg_node *n;

	memcpy(comm, st->comm, sizeof(comm));
	comm[SC_COMM_LEN - 1] = '\0';
	root->count += st->count;
	n = node_kid(root, comm[0] ? comm : "?", FGK_COMM);
	for (size_t k = st->nframes; n && k-- > 0;) {
		n->count += st->count;
		n = node_kid(n,
			     callsites_frame_name(&st->frames[k], buf,
						  sizeof(buf)),
			     FGK_FRAME);
	}
	if (!n)
		return -ENOMEM;
	n->count += st->count;
	n = node_kid(n, names_syscall_fmt(st->abi, st->nr, nbuf, sizeof(nbuf)),
		     FGK_SYSCALL);
	if (!n)
		return -ENOMEM;
	n->count += st->count;
	return 0;
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fg_node *)a)->name,
		      ((const struct fg_node *)b)->name);
}

static int tree_depth(struct fg_node *n)
{
	int d = 0;

	/* flamegraph.pl's order: siblings by name */
	if (n->nkids)
		qsort(n->kids, n->nkids, sizeof(*n->kids), node_cmp);
	for (size_t i = 0; i < n->nkids; i++) {
		int k = tree_depth(&n->kids[i]);

		if (k > d)
			d = k;
	}
	return d + 1;
}

/* A warm colour per name, as flamegraph.pl's; syscalls blue, names green. */
static void color(const struct fg_node *n, char *buf, size_t len)
{
	uint32_t h = 2166136261U;

	for (const char *p = n->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619U;
	switch (n->kind) {
	case FGK_SYSCALL:
		snprintf(buf, len, "rgb(%u,%u,235)", 80 + h % 60,
			 130 + (h >> 8) % 70);
		break;
	case FGK_COMM:
		snprintf(buf, len, "rgb(%u,200,%u)", 90 + h % 60,
			 90 + (h >> 8) % 50);
		break;
	case FGK_ROOT:
		snprintf(buf, len, "rgb(200,200,200)");
		break;
	default:
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50,
			 (h >> 8) % 230, (h >> 16) % 55);
		break;
	}
}

static int node_svg(FILE *f, const struct fg_node *n, uint64_t total,
		    uint64_t before, int depth, int height)
{
	double x = (double)before / (double)total,
	       w = (double)n->count / (double)total;
	double px = FG_PAD + x * (FG_WIDTH - 2 * FG_PAD),
	       pw = w * (FG_WIDTH - 2 * FG_PAD);
	int y = height - FG_BOTTOM - (depth + 1) * FG_FRAME;
	char *e = flamegraph_esc_xml(n->name), fill[32];
	uint64_t at = before;
	int err = 0;

	if (!e)
		return -ENOMEM;
	if (depth && pw < FG_MIN_WIDTH) { /* as flamegraph.pl's --minwidth */
		free(e);
		return 0;
	}
	color(n, fill, sizeof(fill));
	fprintf(f,
		"<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" "
		"data-n=\"%s\" data-c=\"%" PRIu64 "\"><title>%s (%" PRIu64
		" samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" "
		"y=\"%d\"></text></g>\n",
		x, w, depth, e, n->count, e, n->count, 100.0 * w, px, y,
		pw > 0.5 ? pw - 0.5 : pw, FG_FRAME - 1, fill, px + 3,
		y + FG_FRAME - 4);
	free(e);
	for (size_t i = 0; !err && i < n->nkids; i++) {
		err = node_svg(f, &n->kids[i], total, at, depth + 1, height);
		at += n->kids[i].count;
	}
	return err;
}

static const char fg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function(){\n"
	"var W="
	"1200"
	",P="
	"10"
	",frames=[].slice.call(document."
	"querySelectorAll('g.f'));\n"
	"var det=document.getElementById('details'),"
	"mat=document.getElementById('matched'),"
	"unz=document.getElementById('unzoom'),total=0,re=null;\n"
	"function a(g,k){return g.getAttribute('data-'+k);}\n"
	"frames.forEach(function(g){if(a(g,'d')==='0')total=+a(g,'c');"
	"g.querySelector('rect').setAttribute('data-fill',"
	"g.querySelector('rect').getAttribute('fill'));"
	"g.addEventListener('mouseover',function(){det.textContent="
	"g.querySelector('title').textContent;});"
	"g.addEventListener('mouseout',function(){det.textContent=' ';});"
	"g.addEventListener('click',function(){zoom(g);});});\n"
	"function fit(t,w,n){var m=Math.floor((w-6)/7);"
	"t.textContent=m<3?'':n.length<=m?n:n.slice(0,m-2)+'..';}\n"
	"function zoom(z){var x0=z?+a(z,'x'):0,w=z?+a(z,'w'):1,"
	"d0=z?+a(z,'d'):0,e=1e-9,S=W-2*P;\n"
	"unz.style.opacity=z?'1':'0.3';\n"
	"frames.forEach(function(g){var gx=+a(g,'x'),gw=+a(g,'w'),"
	"gd=+a(g,'d'),r=g.querySelector('rect'),t=g.querySelector('text'),"
	"nx,nw;\n"
	"if(gd<d0){if(!(gx<=x0+e&&gx+gw>=x0+w-e)){g.style.display='none';"
	"return;}nx=0;nw=S;g.style.opacity='0.6';}\n"
	"else{if(gx<x0-e||gx+gw>x0+w+e){g.style.display='none';return;}"
	"nx=(gx-x0)/w*S;nw=gw/w*S;g.style.opacity='1';}\n"
	"g.style.display='';r.setAttribute('x',P+nx);"
	"r.setAttribute('width',Math.max(nw-0.5,0));"
	"t.setAttribute('x',P+nx+3);fit(t,nw,a(g,'n'));});}\n"
	"function search(s){re=null;var iv=[];\n"
	"if(s){try{re=new RegExp(s);}catch(x){re=null;}}\n"
	"frames.forEach(function(g){var r=g.querySelector('rect'),"
	"hit=re&&re.test(a(g,'n'));r.setAttribute('fill',hit?"
	"'rgb(230,0,230)':a(r,'fill'));if(hit)iv.push([+a(g,'x'),"
	"+a(g,'x')+ +a(g,'w')]);});\n"
	"iv.sort(function(p,q){return p[0]-q[0];});var sum=0,end=-1;\n"
	"iv.forEach(function(v){if(v[0]>=end){sum+=v[1]-v[0];end=v[1];}"
	"else if(v[1]>end){sum+=v[1]-end;end=v[1];}});\n"
	"mat.textContent=re?'Matched: '+(100*sum).toFixed(1)+'%':'';}\n"
	"unz.addEventListener('click',function(){zoom(null);});\n"
	"document.getElementById('search').addEventListener('click',"
	"function(){search(prompt('Search (regular expression)',"
	"re?re.source:''));});\n"
	"document.addEventListener('keydown',function(ev){if((ev.ctrlKey||"
	"ev.metaKey)&&ev.key==='f'){ev.preventDefault();search(prompt("
	"'Search (regular expression)',re?re.source:''));}});\n"
	"window.scprofSearch=search;window.scprofZoom=function(n){"
	"frames.forEach(function(g){if(a(g,'n')===n)zoom(g);});};\n"
	"zoom(null);})();\n"
	"]]></script>\n";

int flamegraph_svg(FILE *f, const struct sc_stacks *s, const char *title)
{
	struct fg_node root = { .kind = FGK_ROOT };
	char *t = flamegraph_esc_xml(title ? title : "");
	int err = t ? 0 : -ENOMEM, depth, height;

	root.name = strdup("all");
	if (!root.name)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < s->n; i++)
		err = tree_add(&root, &s->v[i]);
	if (err)
		goto out;
	depth = tree_depth(&root);
	height = FG_TOP + depth * FG_FRAME + FG_BOTTOM;
	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;"
		"fill:#000}g.f{cursor:pointer}g.f:hover rect{stroke:#000;"
		"stroke-width:0.5}g.f text{pointer-events:none}"
		".b{cursor:pointer;fill:#33c}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f4ee\"/>\n"
		"<text x=\"%d\" y=\"24\" text-anchor=\"middle\" "
		"style=\"font-size:17px\">%s</text>\n"
		"<text id=\"unzoom\" class=\"b\" x=\"%d\" y=\"24\">Reset Zoom"
		"</text>\n"
		"<text id=\"search\" class=\"b\" x=\"%d\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		"</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		FG_WIDTH, height, FG_WIDTH, height, FG_WIDTH / 2, t, FG_PAD,
		FG_WIDTH - FG_PAD, FG_WIDTH - FG_PAD, height - 10, FG_PAD,
		height - 10);
	if (root.count)
		err = node_svg(f, &root, root.count, 0, 0, height);
	else
		fprintf(f,
			"<text x=\"%d\" y=\"%d\">no call was sampled</text>\n",
			FG_PAD, FG_TOP + 20);
	fputs(fg_script, f);
	fputs("</svg>\n", f);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
out:
	node_free(&root);
	free(t);
	return err;
}
