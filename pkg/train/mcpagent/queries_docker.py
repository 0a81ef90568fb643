# More training queries for the TRAIN half of the docker_mcp_registry
# servers (make.py's TRAIN_SERVERS; the DEV half, tooltalk, taubench and the
# ../shared/bench catalogs are never used). Written by hand on 2026-12-01
# from the task side, the way agents and users phrase one capability when
# calling find_tools (imperative, question, concrete arguments, synonyms
# the tool text does not use, implied steps), with each tool's description
# and schema read for the label; no ranking or evaluation was run or looked
# at. Same shape as queries.py: Q = {server: {tool: [queries]}};
# TASKS = [(task sentence, [(server, tool), ...])], prerequisites included.
Q = {}

Q["stripe-remote"] = {
 "get_stripe_account_info": ["which Stripe account am I connected to", "show the business name and id of our Stripe account", "get details of the connected Stripe account", "is this the live or test Stripe account", "what country is our Stripe account registered in"],
 "retrieve_balance": ["how much is available for payout in Stripe", "check the pending balance on Stripe", "show our current Stripe funds in EUR and USD", "what's the available vs pending amount", "stripe account balance right now", "do we have enough balance to cover a refund"],
 "create_coupon": ["make a 15% off coupon for three months", "create a $5 off discount in Stripe", "set up a one-time 50 percent promo for Black Friday", "new coupon BLACKFRIDAY25 with 25% off", "add a forever 10% discount coupon", "generate a coupon that takes 20 euros off"],
 "list_coupons": ["what discount codes do we have in stripe", "list the active promo coupons", "show me every coupon and its percent off", "do we already have a 20% coupon", "which coupons exist for the summer sale"],
 "create_customer": ["add jane@example.com as a customer", "create a Stripe customer named Acme Corp", "set up a new billing customer for Bob Lee", "register a customer before sending them an invoice", "new customer record with name and email in Stripe", "onboard a client into stripe billing"],
 "list_customers": ["look up the Stripe customer id for bob@acme.io", "show the 10 most recent customers", "who are our customers in Stripe", "get the customer whose email is anna@shop.de", "list every customer created this month"],
 "list_disputes": ["are there any open chargebacks", "list disputed payments that need a response", "show disputes awaiting evidence", "how many payment disputes did we get this month", "which charges were disputed by the cardholder"],
 "update_dispute": ["upload the shipping receipt as evidence for dispute dp_123", "respond to a chargeback with tracking number", "add a customer communication note to the dispute", "submit our counter-evidence for the fraudulent claim", "update dispute du_9 with the delivery proof"],
 "create_invoice": ["draft a new invoice for customer cus_123", "start an invoice for Acme due in 30 days", "create an invoice to bill a client for services", "make an invoice for the March consulting work", "open a draft invoice I can add items to"],
 "create_invoice_item": ["add a $200 setup fee to the draft invoice", "put 10 hours of consulting on the invoice", "add a line for the annual license to invoice in_123", "attach a charge of 49 euros to the customer's next invoice", "include a one-off design fee on the bill"],
 "finalize_invoice": ["finalize invoice in_456 so it gets sent", "turn the draft invoice into an open invoice", "lock the invoice and make it payable", "issue the draft invoice to the customer", "the invoice is ready, finalize it"],
 "list_invoices": ["show unpaid invoices", "which invoices are overdue", "list invoices for customer cus_789", "show all invoices from last month", "did Acme pay their last invoice", "find open invoices in Stripe"],
 "create_payment_link": ["make a checkout link for the $49 ebook", "create a shareable payment URL for the workshop ticket", "I need a link customers can use to buy the pro plan", "generate a buy link for price_123", "payment link for 3 units of the t-shirt", "send me a pay link I can post on Instagram"],
 "list_payment_intents": ["show recent payments", "list payment intents for customer cus_42", "which payments failed today", "did the $120 payment go through", "list incoming payments from this week", "show charges that are still requiring action"],
 "create_price": ["add a $29 per month recurring price to the Pro product", "set a one-time price of 99 EUR for the course", "create a yearly price of $300", "price the new plan at 12 dollars a month", "add a pricing option for the existing product prod_123"],
 "list_prices": ["what prices does the Pro plan have", "list all recurring prices", "show the price ids for our products", "find the monthly price id for the starter plan", "what do we charge for the basic tier"],
 "create_product": ["create a product called Premium Plan", "add an ebook to the Stripe catalog", "set up a new SaaS product before pricing it", "new product: Yoga class pass", "register a physical good we sell in Stripe"],
 "list_products": ["what products do we sell on Stripe", "list the product catalog", "find the product id of the Pro plan", "show all active products", "which items are in our Stripe catalog"],
 "create_refund": ["refund payment pi_123 in full", "issue a partial refund of $20", "give the customer their money back for the duplicate charge", "reverse the charge for order 1042", "refund the last payment from bob@acme.io", "process a refund for a cancelled order"],
 "cancel_subscription": ["cancel subscription sub_123", "end the customer's plan immediately", "unsubscribe Acme from the monthly plan", "the customer wants to stop paying, cancel their subscription", "terminate the trial subscription"],
 "list_subscriptions": ["list subscriptions for customer cus_123", "how many active subscribers do we have", "show subscriptions that are past due", "which customers are on the Pro plan", "list trialing subscriptions"],
 "update_subscription": ["move customer cus_5 from monthly to yearly", "downgrade the subscription to the basic price", "change the quantity on subscription sub_77 to 5 seats", "switch the plan of subscription sub_9", "add a second item to an existing subscription"],
 "search_stripe_resources": ["search Stripe for charges with metadata order_id 1042", "find payment intents with amount over 10000 and status succeeded", "search customers where name contains Smith", "query Stripe for invoices with status open created after June", "search subscriptions by metadata field plan_tier", "use Stripe search to find products named premium"],
 "fetch_stripe_resources": ["fetch the Stripe object ch_3Nabc", "get the details of payment intent pi_123", "retrieve invoice in_456 by id", "look up customer cus_789 by its id", "open the full record of subscription sub_42"],
 "search_stripe_documentation": ["how do I set up Stripe Connect payouts", "stripe docs on idempotency keys", "what is the difference between a charge and a payment intent", "how to handle failed subscription payments in Stripe", "which test card numbers does Stripe provide", "look up how proration works"],
}

Q["notion-remote"] = {
 "notion_append_block_children": ["add a bullet list to the bottom of my Notion page", "insert a heading and two paragraphs into the page", "append today's standup notes to the team page", "add a checkbox item to the notion to-do list", "put a code block under this notion block", "write three new lines at the end of the project page"],
 "notion_retrieve_block": ["get the block with id 1a2b3c in notion", "what type of block is this", "fetch a single notion block by id", "show the content of one specific block", "check whether this notion block has children"],
 "notion_retrieve_block_children": ["list the blocks inside this notion page", "get all child blocks of the toggle", "what's nested under this heading block", "read the items inside a notion column", "fetch the paragraphs under block abc123"],
 "search_pages": ["find my notion notes about the Q3 roadmap", "search notion for pages mentioning pricing", "where is the onboarding checklist page in notion", "look up the meeting notes from Monday in notion", "search my workspace for the design doc", "which notion page talks about vacation policy"],
 "create_page": ["create a notion page called Sprint 14 retro", "add a new page under Projects in notion", "start a notion doc for the product launch plan", "make a page in my notion workspace with this summary", "save these meeting notes as a new notion page", "new notion page for the reading list"],
 "read_page": ["open the notion page and show its text", "what does the roadmap page in notion say", "get the full contents of the notion doc", "read the onboarding page so I can summarize it", "show me the body of page 8f2c"],
 "add_comment": ["leave a comment on the spec page saying looks good", "reply in notion that the draft is approved", "add a note for the reviewer on the notion page", "comment 'please update the dates' on the plan", "post feedback as a comment in notion"],
 "retrieve_page": ["get the properties of notion page 5e1d", "when was this notion page last edited", "who created the notion page with this id", "fetch page metadata like title and parent", "show the status property of the task page"],
}

Q["sentry-remote"] = {
 "search_issues": ["list my open Sentry issues for the web project", "show the top crashes in production", "which bugs are assigned to me in sentry", "unresolved issues first seen in the last 24 hours", "find sentry issues with TypeError in the frontend", "what are the most frequent errors in the api project", "show new regressions since the last release", "sentry issues affecting the most users this week", "search sentry for unhandled exceptions on iOS"],
 "search_events": ["how many errors did the checkout service throw yesterday", "count 500 responses per endpoint in sentry", "show the individual error events for user 42", "average transaction duration for /api/orders", "error rate by browser over the last 7 days", "list the latest events with the tag release 2.3.1", "how many times did the payment timeout happen today", "p95 latency of the search endpoint from sentry traces", "find log entries with level error in sentry"],
}

Q["simplechecklist"] = {
 "list_projects": ["show all my checklist projects", "list every project in SimpleCheckList", "which projects are in the checklist app", "get project ids so I can add tasks"],
 "create_project": ["create a project called Home Renovation", "new checklist project for the website relaunch with a blue color", "set up a project to track moving house", "make a project named Q1 Goals"],
 "get_project": ["show details of project 12", "get the project named Garden by id", "what's the description of this project", "open project 3 in the checklist"],
 "update_project": ["rename the project to Website 2.0", "change the color of the Travel project to green", "update the project description", "edit project 7's name"],
 "delete_project": ["delete the old Wedding project", "remove project 4 and everything in it", "get rid of the test project", "trash the finished project"],
 "list_groups": ["what groups are in the Home project", "list the sections of project 2", "show the groups inside this project", "which categories does the project have"],
 "create_group": ["add a group called Kitchen to the renovation project", "create a new section Backend in project 5", "make a group for phase 2 tasks", "add a Marketing group to the launch project"],
 "list_task_lists": ["show the task lists in the Kitchen group", "list all lists under group 9", "which checklists belong to this group", "what lists are in the Backend section"],
 "create_task_list": ["create a task list named Shopping in the Kitchen group", "add a new list for this week's errands", "make a checklist Packing under the Travel group", "new task list Bugs in group 3"],
 "list_tasks": ["what's on my shopping list", "list the tasks in task list 14", "show the open items on the packing checklist", "which to-dos are left in this list"],
 "create_task": ["add 'buy paint' to the shopping list", "create a high priority task to call the plumber due Friday", "put 'renew passport' on my list", "new task: send invoice to Acme by March 3", "remind me to water the plants as a task"],
 "toggle_task_completion": ["check off 'buy milk'", "mark task 31 as complete", "I finished the report, mark it done", "reopen the task I ticked by mistake", "set task 8 back to not done"],
 "update_task": ["change task 12's priority to high", "move the due date of 'file taxes' to April 10", "edit the title of the task", "add a description to task 5", "update the task's notes"],
 "delete_task": ["delete task 19", "remove 'buy bread' from the list", "drop the duplicate to-do", "this task is not needed anymore, delete it"],
 "list_subtasks": ["show the subtasks of task 7", "what steps are under 'plan the trip'", "list the sub-items of this to-do", "which subtasks are still open for task 22"],
 "create_subtask": ["add a step 'book hotel' under plan the trip", "break task 7 into smaller subtasks", "create a subtask 'buy tickets' for task 3", "add a sub-item to the to-do"],
 "toggle_subtask_completion": ["mark subtask 4 as done", "tick off the 'book hotel' step", "complete the first subtask", "uncheck subtask 11"],
 "delete_subtask": ["delete subtask 6", "remove the 'call airline' step", "drop a sub-item from the task", "get rid of the extra subtask"],
 "get_project_stats": ["how far along is the renovation project", "what percentage of project 2 is done", "show completion stats for the launch project", "how many open tasks remain in project 5"],
 "get_all_tasks": ["show every task across all my projects", "list all my to-dos everywhere", "what tasks are due this week in any project", "give me a full dump of all tasks with details", "which tasks are high priority across projects"],
}

Q["neo4j"] = {
 "get-schema": ["what node labels are in the neo4j database", "show the graph schema before writing a query", "which properties does a Person node have", "list relationship types and property keys", "describe the structure of the graph", "introspect the neo4j data model"],
 "read-cypher": ["MATCH (p:Person) RETURN p LIMIT 10", "how many Movie nodes are there", "find the shortest path between Alice and Bob in the graph", "which actors appeared in The Matrix according to neo4j", "count orders per customer in the graph", "read-only cypher query on the knowledge graph", "list the top 5 most connected nodes"],
 "write-cypher": ["add a Person node named Carol to neo4j", "create a KNOWS relationship between Alice and Bob", "delete all Test nodes from the graph", "set the age property of Alice to 31", "MERGE a Company node for Acme", "create an index on Person name", "import these rows as nodes with a cypher CREATE"],
 "list-gds-procedures": ["which graph data science algorithms are installed", "is pagerank available in this neo4j instance", "list the GDS procedures", "can I run community detection on this database", "show available graph algorithms like louvain"],
}

Q["dotnet-types-explorer"] = {
 "ReferencedAssembliesExplorer": ["list the assemblies referenced by C:/src/App/App.csproj", "which DLLs does my .NET project depend on", "show referenced assemblies matching System.*", "does the project reference Microsoft.Extensions.Logging", "what libraries are available to this csproj"],
 "NamespacesExplorer": ["list namespaces in the Newtonsoft.Json assembly", "which namespaces does System.Text.Json expose", "show namespaces of the referenced assemblies that contain Http", "what namespaces are in this dll", "browse namespaces of an assembly my project uses"],
 "NamespaceTypes": ["what types are in System.Collections.Concurrent", "list the interfaces in the Microsoft.Extensions.DependencyInjection namespace", "find classes whose name ends with Client in Azure.Storage.Blobs", "show the types in namespace MyApp.Models", "which enums are defined in this namespace"],
 "NuGetPackageSearch": ["search nuget for a logging library", "find a .NET package for reading Excel files", "is there a NuGet package for PDF generation", "look up packages named Serilog on nuget.org", "find a C# library for YAML", "search NuGet for prerelease packages about gRPC"],
 "NuGetPackageVersions": ["what's the latest version of Serilog", "list versions of Microsoft.EntityFrameworkCore", "does Polly 8 support .NET 6, show its dependencies", "which versions of Dapper are available including prerelease", "what dependencies does AutoMapper 12 have"],
}

Q["sonarqube"] = {
 "analyze_code_snippet": ["scan this python function for bugs with sonar", "is there a security vulnerability in this SQL snippet", "run SonarQube rules on the Java code I pasted", "lint this TypeScript snippet for code smells", "check my code for quality issues before I commit"],
 "analyze_file_list": ["analyze src/main.go and src/util.go with SonarQube for IDE", "run sonar analysis on the files I changed", "scan these files in my workspace for issues", "check the modified files in the current directory for code smells", "sonarlint the three files I just edited"],
 "toggle_automatic_analysis": ["turn off automatic SonarQube analysis", "enable sonar analysis on save", "stop SonarQube for IDE from analyzing automatically", "switch automatic code analysis back on"],
 "search_sonar_issues_in_projects": ["list blocker and critical issues in project my-api", "what issues did SonarQube find on pull request 42", "show vulnerabilities in the payments project", "find major code smells across my projects", "sonar issues of severity HIGH in the backend", "what problems does sonar report for PR 118"],
 "change_sonar_issue_status": ["mark issue AX12-3 as won't fix", "reopen sonar issue AYb9", "confirm the sonar issue is a real bug", "resolve issue key AZ4k as fixed", "flag this sonar finding as a false positive"],
 "search_my_sonarqube_projects": ["which projects do I have in SonarQube", "list my sonar projects", "find the project key for the mobile app in SonarCloud", "show all projects analyzed by sonar", "what is the sonar project key of the backend repo"],
 "list_quality_gates": ["what quality gates are defined", "list all quality gates in sonar", "which quality gate is the default", "show the available quality gate configurations"],
 "get_project_quality_gate_status": ["is the quality gate green for my-api", "did PR 57 pass the sonar quality gate", "quality gate result for the main branch of web-app", "why is the release branch failing the quality gate", "check whether the analysis meets the gate before merging"],
 "show_rule": ["what does rule java:S1481 mean", "explain sonar rule python:S5754", "details of the rule that flagged this issue", "why does sonar complain about typescript:S3776", "show the description and remediation for rule S2095"],
 "list_rule_repositories": ["list rule repositories for java", "which rule sets exist for Python in sonar", "show sonar rule repositories matching security", "what rule repositories are installed"],
 "list_languages": ["which programming languages does this SonarQube analyze", "does our sonar support Kotlin", "list supported languages in SonarQube", "can sonar scan terraform files"],
 "get_component_measures": ["what's the code coverage of my-api on main", "how many lines of code does the project have", "get the duplication percentage for web-app", "cyclomatic complexity of the backend project", "show technical debt and number of bugs for project X", "coverage on pull request 12"],
 "search_metrics": ["which metric keys can I query in sonar", "list available SonarQube metrics", "what is the metric key for duplicated lines", "find the name of the coverage metric", "show all sonar metric definitions"],
 "get_raw_source": ["show the source of src/app.js as sonar sees it", "get raw code of file my-api:src/main/java/App.java", "download the analyzed source file from SonarQube", "view the file content of this sonar component"],
 "get_scm_info": ["who last changed each line of this file according to sonar", "git blame info for src/util.py in SonarQube", "get commit authors per line of the flagged file", "show scm data for lines 10 to 40 of the file"],
 "get_system_health": ["is SonarQube up and healthy", "check sonar server health status", "is the SonarQube instance green or red", "why is SonarQube slow, check its health"],
 "get_system_status": ["which version of SonarQube is running", "what state is the sonar server in", "is the server still starting up or migrating the database", "get the sonar server id and version"],
 "get_system_logs": ["show the SonarQube web server logs", "get the compute engine log from sonar", "download sonar's es logs to debug indexing", "read the sonarqube app log for errors"],
 "ping_system": ["ping sonarqube", "is the sonar server reachable", "quick liveness check of SonarQube", "does sonar respond"],
 "get_system_info": ["show SonarQube JVM and database configuration", "what database does our sonar use", "get the sonar system info including search index state", "dump sonarqube server settings for support"],
 "create_webhook": ["add a webhook to notify jenkins after sonar analysis", "create a sonar webhook pointing to https://ci.example.com/hook", "send quality gate results to our slack endpoint", "register a webhook with a secret for project my-api"],
 "list_webhooks": ["which webhooks are configured in sonar", "list the webhooks for project web-app", "show sonarqube webhooks and their urls", "is there already a webhook for our CI"],
 "list_portfolios": ["list SonarQube portfolios", "show my favourite portfolios in sonar", "which portfolios exist for the enterprise", "find the portfolio named Payments"],
 "list_enterprises": ["which SonarQube Cloud enterprises do I belong to", "list enterprises I can access in SonarCloud", "get the enterprise id for my organization", "show available sonar enterprises"],
 "search_dependency_risks": ["does my-api depend on any vulnerable libraries", "list dependency risks found by SonarQube", "show SCA issues for the main branch", "which third-party packages have known CVEs in this project", "check the project's open source dependencies for license risks"],
}
