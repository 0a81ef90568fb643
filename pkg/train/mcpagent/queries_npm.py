# Training queries for the npm MCP servers captured in servers/ (see
# servers/README.md): capability queries as agents and users phrase them
# when they call find_tools (one capability each, concrete arguments,
# words the tool text does not use, implied steps), and multi-tool tasks
# with every tool they need, prerequisites included. Written by hand on
# 2026-12-01 from the task side, each label checked against the tool's
# description and input schema, before any ranking was looked at (no
# retrieval or evaluation was run). Never for ../shared/bench catalogs or
# the real-MCP DEV servers. Where two servers offer the same capability
# (GitHub/GitLab, Playwright/Chrome DevTools, the web-search servers,
# notion/notion-remote) the query names the product or a feature only the
# labelled tool has.
# {server: {tool: [queries]}}; TASKS: (query, [(server, tool)]).
Q = {}

Q["github"] = {
 "create_or_update_file": ["update the README in my GitHub repo with this text", "commit a new CHANGELOG.md file to the main branch on GitHub", "overwrite docs/setup.md in octo/app on GitHub", "add a LICENSE file to the GitHub repository", "edit a single file directly on GitHub without cloning", "change the version in package.json on the GitHub repo"],
 "search_repositories": ["find GitHub repos about rust web frameworks", "search GitHub for a golang MCP server", "which repositories on GitHub match 'terraform aws eks'", "look for popular open source projects for PDF parsing on GitHub", "is there a GitHub repo for this library"],
 "create_repository": ["create a new GitHub repo called weekend-project", "make a private repository on GitHub", "start a fresh GitHub repository with a README", "new repo on my GitHub account for the blog"],
 "get_file_contents": ["show me src/main.go from the GitHub repo", "read the README of facebook/react on GitHub", "what's in the docs folder of that GitHub project", "open the Dockerfile in the repository on the dev branch", "fetch the contents of package.json from GitHub", "list the files at the root of the GitHub repo"],
 "push_files": ["push these three files to GitHub in one commit", "upload several files to the repo in a single commit", "commit the generated site files to the gh-pages branch", "push a batch of changes to GitHub at once"],
 "create_issue": ["open a GitHub issue for the login bug", "file a bug report in octo/app on GitHub", "create an issue titled 'crash on startup' with the label bug", "report this problem in the project's GitHub issues", "add a feature request issue to the repo"],
 "create_pull_request": ["open a pull request from feature/login into main", "create a PR for my branch on GitHub", "submit the changes for review as a GitHub pull request", "make a draft PR with this description", "raise a PR against the develop branch"],
 "fork_repository": ["fork this GitHub repo to my account", "make my own copy of torvalds/linux on GitHub", "fork the project into our organization"],
 "create_branch": ["create a branch named fix/typo on GitHub", "make a new branch off main in the GitHub repo", "branch from develop for the release on GitHub"],
 "list_commits": ["show the latest commits on main in the GitHub repo", "who committed to the repo this week on GitHub", "list recent commits of the release branch", "what were the last 10 commits on GitHub"],
 "list_issues": ["list open issues in octo/app", "show GitHub issues labelled bug", "what issues are still open in the repository", "closed issues from last month on GitHub", "which issues are assigned in the repo"],
 "update_issue": ["close GitHub issue #42", "change the title of issue 17", "add the label needs-triage to the issue", "assign issue 8 to alice on GitHub", "reopen the GitHub issue"],
 "add_issue_comment": ["comment on issue #42 saying it is fixed", "reply on the GitHub issue with the workaround", "leave a comment on the pull request thread", "post an update on the bug report on GitHub"],
 "search_code": ["search GitHub code for uses of deprecatedFunction", "find where MAX_RETRIES is defined across GitHub", "code search for 'import boto3' in our org on GitHub", "which GitHub repos call this API in their code"],
 "search_issues": ["search GitHub for issues mentioning 'segfault' in any repo", "find pull requests across GitHub that mention CVE-2024-1234", "has anyone reported this error in GitHub issues", "search all my open PRs across repositories"],
 "search_users": ["find the GitHub user named torvalds", "search GitHub users located in Berlin", "look up a developer's GitHub account"],
 "get_issue": ["show GitHub issue #1234", "get the details of issue 77 in octo/app", "what does issue 12 say", "read the description of that GitHub issue"],
 "get_pull_request": ["show pull request #56", "get the details of PR 3 on GitHub", "who opened this pull request and is it mergeable", "what's the status of PR 89"],
 "list_pull_requests": ["list open pull requests in the repo", "which PRs are waiting on GitHub", "show merged pull requests into main", "pull requests opened against develop"],
 "create_pull_request_review": ["approve pull request 56", "request changes on the PR with a comment", "leave a review on the GitHub pull request", "review the PR and approve it"],
 "merge_pull_request": ["merge PR #56", "squash and merge the pull request", "merge the approved pull request into main on GitHub"],
 "get_pull_request_files": ["which files does PR 56 change", "list the files changed in the pull request", "what did this PR touch"],
 "get_pull_request_status": ["are the CI checks passing on PR 56", "did the status checks on the pull request go green", "check the build status of the PR"],
 "update_pull_request_branch": ["update the PR branch with the latest main", "bring pull request 56 up to date with its base branch", "the PR is behind main, update it"],
 "get_pull_request_comments": ["show the review comments on PR 56", "what inline comments did reviewers leave on the pull request", "read the code review comments"],
 "get_pull_request_reviews": ["who approved pull request 56", "list the reviews on the PR", "has anyone reviewed my pull request yet"],
}

Q["gitlab"] = {
 "create_or_update_file": ["update the README in our GitLab project", "commit a config change to a file on GitLab", "create a new file in the GitLab repo on main", "edit .gitlab-ci.yml directly in GitLab"],
 "search_repositories": ["find a GitLab project named payments", "search GitLab for projects about kubernetes", "which GitLab projects match 'infra'"],
 "create_repository": ["create a new GitLab project", "make a private project on GitLab for the docs", "new GitLab repo called data-pipeline"],
 "get_file_contents": ["read the Makefile from the GitLab project", "show the contents of src/app.py on GitLab", "list the files in the GitLab repository root", "open the GitLab CI config of the project"],
 "push_files": ["push several files to GitLab in one commit", "commit these files together to the GitLab project"],
 "create_issue": ["open an issue in our GitLab project", "file a GitLab issue about the failing deploy", "create a GitLab ticket for the broken link"],
 "create_merge_request": ["open a merge request from feature-x to main", "create an MR on GitLab", "submit my branch for review as a merge request", "open a GitLab MR with this description"],
 "fork_repository": ["fork the GitLab project into my namespace", "make a personal fork of the project on GitLab"],
 "create_branch": ["create a branch on GitLab from main", "new GitLab branch called hotfix-12", "branch off develop in the GitLab project"],
}

Q["slack"] = {
 "slack_list_channels": ["list the channels in our Slack", "what Slack channels are there", "find the channel id of #general", "which public channels exist in the workspace"],
 "slack_post_message": ["post 'deploy finished' to #releases", "send a message to the team channel on Slack", "tell the #general channel that the build is green", "announce the outage in Slack", "share the summary in the marketing channel", "notify the team on Slack"],
 "slack_reply_to_thread": ["reply in the thread under that Slack message", "answer the question in the thread", "respond in-thread to the alert message", "follow up in the Slack thread with the fix"],
 "slack_add_reaction": ["add a thumbs up to the message", "react with :white_check_mark: to the deploy message", "put an eyes emoji on the request so they know I'm on it"],
 "slack_get_channel_history": ["what was said in #support today", "read the latest messages in the channel", "catch me up on #engineering", "show recent Slack messages in the incidents channel", "summarize the last 50 messages of the channel"],
 "slack_get_thread_replies": ["read all replies in that Slack thread", "what did people answer in the thread", "get the whole discussion under the message"],
 "slack_get_users": ["list everyone in the Slack workspace", "who is in our Slack", "find the Slack user id for Maria"],
 "slack_get_user_profile": ["what's Bob's title in his Slack profile", "get the profile of Slack user U123", "what's the email on that Slack account", "show the user's status and time zone"],
}

Q["google-maps"] = {
 "maps_geocode": ["get the coordinates of 1600 Amphitheatre Parkway", "latitude and longitude of the Eiffel Tower", "geocode this address", "where exactly is 10 Downing Street on the map"],
 "maps_reverse_geocode": ["what address is at 40.7128, -74.0060", "turn these GPS coordinates into a street address", "which city is at lat 48.85 lng 2.35", "reverse geocode the location"],
 "maps_search_places": ["find sushi restaurants in Seattle on Google Maps", "Google Places search for coffee shops near Union Square", "search Google Maps for hardware stores nearby", "gas stations around the airport", "hotels close to the convention center"],
 "maps_place_details": ["what are the opening hours of this restaurant", "get the phone number and reviews of the place", "is the museum open on Sunday", "details of the place with this place id"],
 "maps_distance_matrix": ["how far is each store from the warehouse", "travel times from three offices to the airport", "compare driving distances between these cities", "distance and duration between several origins and destinations"],
 "maps_elevation": ["what's the elevation of Denver", "how high above sea level is this point", "altitude of the trailhead coordinates"],
 "maps_directions": ["directions from the hotel to the stadium", "how do I get from Berlin Hauptbahnhof to the airport by transit", "driving route from San Francisco to LA", "walking directions to the museum", "how long does it take to cycle to work"],
}

Q["tavily"] = {
 "tavily_search": ["search with Tavily for the latest Fed rate decision", "use Tavily to find recent news about the election", "tavily web search for Python 3.13 release notes", "look up current information with Tavily"],
 "tavily_extract": ["extract the text of these two URLs with Tavily", "pull the article content from this link as markdown using tavily", "get raw page content from a list of URLs with Tavily"],
 "tavily_crawl": ["crawl docs.example.com two levels deep with Tavily", "tavily crawl the blog and collect all posts", "crawl the website starting from the homepage with Tavily"],
 "tavily_map": ["map the structure of the site with Tavily", "list all URLs on example.com using tavily map", "get the sitemap of a website via Tavily"],
 "tavily_research": ["do in-depth research with Tavily on solid-state batteries", "tavily research report on the EV market in Europe", "use Tavily to research the question across many sources"],
}

Q["mermaid"] = {
 "generate_mermaid_diagram": ["draw a flowchart of the login process", "make a sequence diagram of the API calls", "render this mermaid code as an image", "create a gantt chart for the project plan", "diagram the class hierarchy as mermaid", "turn this process description into a diagram", "generate an SVG of a state diagram"],
}

Q["brave-search"] = {
 "brave_web_search": ["search the web with Brave for kubernetes ingress examples", "brave search 'best budget laptops 2026'", "use Brave Search to look up the error message", "find websites about sourdough baking with Brave"],
 "brave_local_search": ["use Brave local search for plumbers in my area", "restaurants near me with ratings via Brave", "find a dentist in Austin with opening hours using Brave", "Brave local results for bike shops nearby"],
 "brave_video_search": ["Brave video search for how to change a bike tire", "search for YouTube tutorials on React hooks", "video results for 'sourdough starter'", "look for recent video clips of the launch"],
 "brave_image_search": ["Brave image search for the Golden Gate Bridge", "image search for red panda photos", "get images of mid-century modern chairs", "show me photos of the new iPhone"],
 "brave_news_search": ["Brave news search: chip shortage", "news articles from today about the storm", "what are the headlines about OpenAI this week", "recent news coverage of the merger", "breaking news on the earthquake"],
 "brave_summarizer": ["give me an AI summary of the Brave search results", "summarize what the web says about intermittent fasting with Brave's summarizer", "get a Brave summary with inline references for the search key"],
 "brave_llm_context": ["get grounding text from the web for this question", "fetch relevant page chunks for RAG about the new tax rules", "web content ready for the model to reason over about CRISPR", "give me extracted web passages, not just links, about rust async"],
 "brave_place_search": ["points of interest near these coordinates", "which city is 'springfield' — list the candidates", "find cafés within 500 m of 48.85, 2.35", "resolve the address 350 5th avenue near NYC", "places around the Louvre with opening hours"],
}

Q["google-calendar"] = {
 "list-calendars": ["which calendars do I have", "list my Google calendars", "show the calendar ids of my work and family calendars"],
 "list-events": ["what's on my calendar next Friday", "show my meetings for tomorrow", "what do I have this week", "list events on the team calendar in March", "am I busy on Monday morning", "what's my schedule today"],
 "search-events": ["find the meeting called 'quarterly review'", "when is my dentist appointment", "search my calendar for events with Alice", "look for the standup event"],
 "get-event": ["show the details of that calendar event", "who is invited to the event with id abc123", "get the location and attendees of the meeting"],
 "list-colors": ["which colors can I give calendar events", "list the color ids for events"],
 "create-event": ["schedule a meeting with Bob tomorrow at 3pm", "add lunch with Sarah on Friday at noon to my calendar", "block two hours on Thursday for deep work", "create a calendar event for the dentist on May 3", "put the flight on my calendar", "book a 30 minute call with the client next Tuesday"],
 "create-events": ["add all five sessions of the workshop to my calendar at once", "create several events in bulk", "put each sprint review for the quarter on the calendar"],
 "update-event": ["move my 2pm meeting to 4pm", "reschedule the standup to Wednesday", "change the location of the event to room 4", "add Carol as an attendee to the meeting", "rename the event to 'Planning'"],
 "delete-event": ["cancel my meeting on Friday", "delete the event from my calendar", "remove the duplicate calendar entry"],
 "get-freebusy": ["when are Alice and I both free this week", "is the team available Thursday afternoon", "find a free slot for a one-hour meeting", "check whether the room calendar is busy at 10"],
 "get-current-time": ["get the current time from the calendar server before creating the event", "current date and time in my calendar's time zone"],
 "respond-to-event": ["accept the meeting invitation", "decline the invite for Friday", "RSVP maybe to the offsite", "reply tentative to the event"],
 "manage-accounts": ["connect another Google account to the calendar", "which Google accounts are signed in for calendar", "remove my old work account from the calendar server"],
}

# browser: the real @playwright/mcp catalog (servers/browser.jsonl); queries.py
# has the first queries for it.
Q["browser"] = {
 "browser_navigate": ["open https://example.com/pricing", "go to the GitHub login page in the browser", "load localhost:3000 to check the app", "browse to the docs site", "point the browser at the staging URL"],
 "browser_navigate_back": ["go back one page", "return to the search results page", "hit the back button"],
 "browser_snapshot": ["what elements are on this page", "get the accessibility tree of the page", "look at the page to find the checkout button", "see what the page shows now after the click"],
 "browser_click": ["click 'Accept cookies'", "press the Next button", "open the first search result link", "click the checkbox to agree to the terms", "double-click the file name in the list", "right-click the row"],
 "browser_type": ["type 'wireless headphones' in the search field and press enter", "enter the password into the password box", "fill the username field with admin", "write a comment in the text area"],
 "browser_take_screenshot": ["grab a screenshot of the current page as png", "capture just the header element as an image", "screenshot the page so I can see how it looks", "save a picture of the browser window"],
 "browser_press_key": ["press Tab to move to the next field", "hit ArrowDown in the list", "press Ctrl+A on the page", "send the Enter key"],
 "browser_select_option": ["pick 'Germany' in the country dropdown", "select the large size option", "choose March from the month select box"],
 "browser_wait_for": ["wait 5 seconds for the page to settle", "wait until 'Loading…' disappears", "wait for the text 'Order confirmed' to show up"],
 "browser_tabs": ["list the open browser tabs", "close the current tab", "switch back to the first tab", "open a new browser tab"],
 "browser_close": ["close the page when done", "shut the browser page down"],
 "browser_file_upload": ["attach resume.pdf to the upload field", "upload the photo through the file chooser", "choose files for the upload dialog"],
 "browser_fill_form": ["fill in name, email and phone on the contact form", "complete the checkout form with my address", "fill several form fields at once"],
 "browser_evaluate": ["get document.title with JavaScript", "run a script on the page to count the links", "evaluate a JS expression on this element", "read localStorage of the page"],
 "browser_console_messages": ["any JavaScript errors in the console", "read the console log of the page", "check the console for warnings"],
 "browser_network_requests": ["list the API calls the page made", "which XHR requests failed on load", "show the network traffic since the page loaded"],
 "browser_network_request": ["show the response body of request number 12", "get the headers of that API request", "inspect the full details of one network request"],
 "browser_pdf_save": ["print the page to PDF", "export this web page as invoice.pdf", "save the article as a PDF file"],
 "browser_handle_dialog": ["accept the confirm dialog", "dismiss the alert popup", "answer the prompt dialog with 'yes'", "the page shows a 'leave site?' dialog, confirm it"],
 "browser_emulate_media": ["switch the page to dark mode", "emulate prefers-reduced-motion", "render the page with print media styles", "check how the site looks in the light color scheme"],
 "browser_drop": ["drop the file onto the upload area", "drag report.csv from disk onto the dropzone", "drop some text data onto the editor element"],
 "browser_find": ["find the 'Sign out' link on the page", "locate the element containing 'Total:'", "search the page for text matching a price regex", "where on the page is the newsletter checkbox"],
 "browser_run_code_unsafe": ["run a Playwright script against the page", "execute this playwright snippet: await page.getByRole('button').click()", "use Playwright code to loop over all rows"],
 "browser_drag": ["drag the card from To Do to Done", "drag and drop the slider handle", "reorder the list by dragging item 3 above item 1"],
 "browser_hover": ["hover over the Products menu", "mouse over the tooltip icon", "hover the avatar to show the menu"],
 "browser_resize": ["make the browser window 375 by 812 to test mobile", "resize the viewport to 1920x1080", "shrink the window to tablet size"],
}

Q["chrome-devtools"] = {
 "click": ["click the login button in Chrome", "click the element uid 12 in the Chrome page", "double click the row in the DevTools-controlled page"],
 "close_page": ["close the second Chrome tab", "close page 2 in Chrome"],
 "drag": ["drag the element onto the trash zone in Chrome", "drag one element onto another with Chrome DevTools"],
 "emulate": ["throttle the network to slow 3G in Chrome", "emulate a mobile viewport and slow CPU", "set the geolocation to Tokyo for the page", "simulate being offline in Chrome", "change the user agent to an iPhone", "4x CPU throttling for the test"],
 "evaluate_script": ["run JavaScript in the Chrome page and return the result", "evaluate a script that reads window.performance in Chrome", "execute a local JS file inside the page in Chrome"],
 "fill": ["type my email into the input in Chrome", "fill the search box in the Chrome page", "pick an option in the select element in Chrome"],
 "fill_form": ["fill the whole signup form in Chrome at once", "fill inputs, checkboxes and radios of the form in Chrome"],
 "get_console_message": ["show console message 5 in full", "get the details and stack of that console error"],
 "get_css_styles": ["which CSS rules apply to this button", "why is the heading red — show the matched styles", "get the computed and inherited styles of the element", "inspect CSS variables on the node"],
 "get_network_request": ["show request 7's headers and response in DevTools", "get the details of the selected network request", "inspect the failing POST request's body"],
 "handle_dialog": ["accept the alert in Chrome", "dismiss the beforeunload dialog in the Chrome page"],
 "hover": ["hover the menu in Chrome", "mouse over the element in the Chrome page"],
 "lighthouse_audit": ["run Lighthouse on the page", "audit the site for accessibility problems", "what's the SEO score of the homepage", "check best practices and accessibility with Lighthouse", "a11y audit of the landing page"],
 "list_console_messages": ["list console errors in Chrome since the page loaded", "what did the page log to the DevTools console", "show all console warnings in Chrome"],
 "list_network_requests": ["list the network requests the page made in Chrome", "which requests returned 404 in DevTools", "show recent fetch/XHR calls of the page in Chrome"],
 "list_pages": ["which tabs are open in Chrome", "list the pages in the browser with their ids"],
 "navigate_page": ["reload the page in Chrome", "go to https://example.com in the Chrome tab", "go forward in Chrome history", "navigate the current Chrome page back"],
 "new_page": ["open a new Chrome tab with the dashboard", "open localhost:8080 in a new page in Chrome", "start a new tab and load the staging site"],
 "performance_analyze_insight": ["explain the LCP breakdown insight from the trace", "more detail on the render-blocking insight", "dig into the DocumentLatency insight of the recording"],
 "performance_start_trace": ["record a performance trace of the page load", "measure Core Web Vitals of the homepage", "why is the page slow — profile it", "start profiling with reload to get LCP", "check the page's loading performance"],
 "performance_stop_trace": ["stop the performance recording", "end the trace and get the results"],
 "press_key": ["press Control+Shift+R in Chrome", "send Escape to the Chrome page", "press Enter in Chrome"],
 "resize_page": ["resize the Chrome page to 390x844", "set the Chrome window size to 1280 by 720"],
 "screencast_start": ["record a video of the browser", "start a screen recording of the page", "capture a screencast while I test the flow"],
 "screencast_stop": ["stop the screen recording", "finish the screencast and save the video"],
 "select_page": ["switch to the tab with the checkout page", "use page 3 for the next steps", "select the second Chrome tab as the target"],
 "take_heapsnapshot": ["take a heap snapshot to find the memory leak", "why does the page use so much memory — capture the JS heap", "save a heap snapshot of the tab"],
 "take_screenshot": ["screenshot the Chrome page", "take a screenshot of the element in Chrome", "full page screenshot with Chrome DevTools"],
 "take_snapshot": ["get a text snapshot of the page's elements in Chrome", "list the element uids on the Chrome page so I can click", "read the a11y tree of the page in Chrome"],
 "type_text": ["type text with the keyboard into the focused input in Chrome", "keyboard-type 'hello' into the focused field"],
 "upload_file": ["upload photo.jpg through the file input in Chrome", "attach a file to the form in the Chrome page"],
 "wait_for": ["wait for 'Saved' to appear on the Chrome page", "wait until the text shows up in Chrome"],
}

Q["firecrawl"] = {
 "firecrawl_scrape": ["scrape https://example.com/pricing to markdown", "get the content of this page with Firecrawl", "scrape the product page and pull out the price as JSON", "firecrawl the article URL and keep only the main content", "scrape the page and give me its links", "get a screenshot and markdown of the landing page with firecrawl"],
 "firecrawl_map": ["list every URL on docs.stripe.com", "find all pages of the website without scraping them", "discover the URLs under /blog on the site", "which pages does the site have about pricing"],
 "firecrawl_search": ["search the web with Firecrawl and scrape the top results", "firecrawl search for 'open source vector databases'", "find news about the acquisition with Firecrawl", "search and get page content for the best CRM tools"],
 "firecrawl_find_tools": ["which Firecrawl data providers cover company filings", "browse Alexandria providers for real estate data", "find a data contract for restaurant listings"],
 "firecrawl_search_feedback": ["rate the firecrawl search result as good", "send feedback that search id 1234 returned bad results"],
 "firecrawl_feedback": ["report that the scrape job returned wrong content", "give quality feedback on the Firecrawl crawl job"],
 "firecrawl_crawl": ["crawl the whole docs site and collect the pages", "crawl example.com up to 50 pages", "scrape every page of the blog", "download all pages under /guides with firecrawl crawl"],
 "firecrawl_check_crawl_status": ["is the crawl finished yet", "check the status of crawl job abc-123", "get the results of my running crawl"],
 "firecrawl_extract": ["extract structured company info from these URLs with the old Firecrawl extract", "firecrawl extract prices from several product pages into JSON"],
 "firecrawl_agent": ["research the founders and funding of these five startups and return JSON", "build a list of YC companies in fintech with their websites", "find pricing plans of competing tools across sites", "have the Firecrawl agent gather contact details for each company"],
 "firecrawl_agent_status": ["is the research agent job done", "get the results of firecrawl agent job 42"],
 "firecrawl_interact": ["open the page in a live browser and click 'Load more'", "log into the site with Firecrawl interact and submit the form", "run Python against the live browser session of that scrape"],
 "firecrawl_interact_stop": ["stop the Firecrawl interact session", "close the live browser session for scrape id s-9"],
 "firecrawl_parse": ["parse this PDF into markdown", "convert report.docx into text", "extract the tables from the spreadsheet file", "read contract.pdf and answer who the parties are", "summarize the local PDF document"],
 "firecrawl_monitor_create": ["watch the pricing page and tell me when it changes", "monitor the competitor's blog every day", "set up a recurring scrape that detects changes", "alert me when the job listings page updates"],
 "firecrawl_monitor_list": ["list my Firecrawl monitors", "which page monitors do I have"],
 "firecrawl_monitor_get": ["show the configuration of monitor m-12", "what's the schedule of the pricing monitor"],
 "firecrawl_monitor_update": ["pause the pricing page monitor", "change the monitor to check hourly", "add another URL to the monitor"],
 "firecrawl_monitor_delete": ["delete the blog monitor", "stop and remove monitor m-12 for good"],
 "firecrawl_monitor_run": ["run the monitor check now", "trigger an immediate check of the pricing monitor"],
 "firecrawl_monitor_checks": ["list the past checks of the monitor", "history of changes detected by monitor m-12"],
 "firecrawl_monitor_check": ["show which pages changed in the last monitor check", "details of monitor check c-7"],
 "firecrawl_research_search_papers": ["find papers on protein folding with diffusion models", "search for research on retrieval augmented generation", "academic papers about CRISPR off-target effects", "recent arXiv papers on mixture of experts"],
 "firecrawl_research_inspect_paper": ["get the metadata of arXiv 2401.01234", "what's the title and authors of DOI 10.1038/nature12373", "look up PMID 31452104"],
 "firecrawl_research_related_papers": ["papers that cite 'Attention Is All You Need'", "find related work to arXiv 1706.03762", "what papers are similar to these two seed papers"],
 "firecrawl_research_read_paper": ["what dataset did this paper use", "read the methods section of arXiv 2303.08774 about training data", "find the passage where the paper reports its accuracy"],
 "firecrawl_research_search_github": ["search GitHub issues about this error with firecrawl research", "firecrawl research search over GitHub READMEs"],
 "firecrawl_developer_search": ["Firecrawl developer search for 'ECONNRESET undici' in issues and PRs", "find READMEs and code docs about a library's config option", "use Firecrawl's developer index to see if a merged PR fixed this bug upstream"],
 "firecrawl_credit_usage": ["how many Firecrawl credits do I have left", "show my Firecrawl credit consumption this month"],
}
